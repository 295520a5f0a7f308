import type { Argv } from "yargs";
import type { ApiErrorBody } from "../errors.js";
import { unwrapData } from "../errors.js";
import { pages } from "../pages.js";

export type ListArgs = { limit?: number; after?: string; all?: boolean };
type Page<T> = { data: T[]; has_more: boolean; next_page?: string };
type PageResult<T> = { data?: Page<T>; error?: ApiErrorBody; response: Response };

export function listOptions<T>(y: Argv<T>): Argv<T & ListArgs> {
  return y
    .option("limit", { type: "number", describe: "Items per page, 1–240 (default 20)" })
    .option("after", { type: "string", describe: "The cursor a previous page printed" })
    .option("all", { type: "boolean", describe: "Every page" })
    .conflicts("all", "after") as Argv<T & ListArgs>;
}

/** One page (`--limit`, `--after`), or with `--all` every item in one envelope. */
export async function collect<T>(
  args: ListArgs,
  fetchPage: (after: string | undefined, limit: number | undefined) => Promise<PageResult<T>>,
): Promise<Page<T>> {
  if (!args.all) return unwrapData(await fetchPage(args.after, args.limit));
  const data: T[] = [];
  for await (const item of pages((after) => fetchPage(after, args.limit ?? 240))) data.push(item);
  return { data, has_more: false };
}
