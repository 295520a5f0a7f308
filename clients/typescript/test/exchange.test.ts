import { describe, expect, it } from "vitest";
import { ApiError, exchangeOidcToken } from "../src/index.js";

/** A fetch that records each request and answers `answer`. */
function recording(answer: () => Response) {
  const requests: Request[] = [];
  const fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    requests.push(new Request(input, init));
    return answer();
  };
  return { requests, fetch };
}

describe("exchangeOidcToken (POST /v1/oidc/token, API_CONTRACT §27)", () => {
  it("sends the token without an API key or an Idempotency-Key, and answers the issued key", async () => {
    const issued = { id: "k1", key: "dpk_new", expires_at: "2026-11-25T05:00:00.000Z" };
    const { requests, fetch } = recording(() => Response.json(issued, { status: 201 }));
    const answer = await exchangeOidcToken(
      { baseUrl: "http://api.test/v1/", headers: { "user-agent": "ci/1" }, fetch },
      { trust_id: "t1", token: "a.b.c" },
    );
    expect(answer).toEqual(issued);
    expect(requests).toHaveLength(1);
    const [req] = requests as [Request];
    expect(`${req.method} ${req.url}`).toBe("POST http://api.test/v1/oidc/token");
    expect(req.headers.get("x-api-key")).toBeNull();
    expect(req.headers.get("idempotency-key")).toBeNull();
    expect(req.headers.get("user-agent")).toBe("ci/1");
    expect(await req.json()).toEqual({ trust_id: "t1", token: "a.b.c" });
  });

  it("is not retried: a refusal is the API's own ApiError after one request, a 5xx too", async () => {
    const refusal = { code: "unauthenticated", message: "The token's `jti` was exchanged before." };
    const refused = recording(() => Response.json(refusal, { status: 401 }));
    const error = await exchangeOidcToken(
      { baseUrl: "http://api.test", fetch: refused.fetch },
      { trust_id: "t1", token: "a.b.c" },
    ).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(401);
    expect((error as ApiError).body.message).toMatch(/jti/);
    expect(refused.requests).toHaveLength(1);

    const down = recording(() => new Response("upstream down", { status: 503 }));
    await expect(
      exchangeOidcToken({ baseUrl: "http://api.test", fetch: down.fetch }, { trust_id: "t1", token: "x" }),
    ).rejects.toBeInstanceOf(ApiError);
    expect(down.requests).toHaveLength(1);
  });
});
