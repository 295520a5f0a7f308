/** The API key routes (API_CONTRACT §15). */
import type { UnscopedRoute } from "../types";

export const unscoped: UnscopedRoute[] = [
  {
    name: "GET /v1/api-keys/current",
    why: "the calling key's own record, for any valid key; tested in test/routes/api-keys/getCurrentApiKey.test.ts",
  },
];
