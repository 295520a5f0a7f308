/**
 * getDeploymentTimeline: GET /v1/deployments/{id}/timeline (API_CONTRACT §19), as JSON pages and
 * as a live stream (`Accept: text/event-stream`). What spans requests (racing writers, clients
 * that reconnect, dropped streams, the feed's restart, the cost of idle streams) is in
 * test/properties/timeline/.
 */
import { createExecutionContext, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../../src/app";
import type { DeploymentRecord } from "../../../src/schemas/deployment";
import type { TimelineEntry } from "../../../src/schemas/timeline";
import { PRODUCTION_LIMITS, request } from "../../helpers/api";
import {
  brief,
  deploymentOfStacks,
  deploymentRoute,
  logLines,
  postLogs,
  report,
  reportOk,
  timelineOf,
} from "../../helpers/engine";
import { type ErrorBody, expectError, TS, UNKNOWN_ID } from "../../helpers/expect";
import { createDeployment } from "../../helpers/factories";
import { parseEventStream } from "../../helpers/openapi";
import { runCommonRouteTests } from "../../helpers/security";
import { nextEntries, openStream, readToEnd } from "../../helpers/sse";

type Page = { data: TimelineEntry[]; has_more: boolean; next_page?: string };

/** A deployment of three stacks (in that order) of one environment. */
const threeStacks = () => deploymentOfStacks(3);

describe("GET /v1/deployments/{id}/timeline (JSON)", () => {
  it("a new deployment's timeline is its `queued` entry; its stacks' initial `queued` makes none", async () => {
    const { owner, deployment } = await threeStacks();
    const res = await request<Page>("GET", `/v1/deployments/${deployment.id}/timeline`, { key: owner.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: [
        {
          seq: 1,
          type: "status",
          created_at: deployment.created_at,
          stack_id: null,
          status: "queued",
          status_reason: null,
          stream: null,
          message: null,
        },
      ],
      has_more: false,
    });
    expect(res.headers.get("etag")).toMatch(/^W\//);
  });

  it("every status the deployment and each stack enters, the deployment's first and its stacks in `stack_ids` order; a stay records nothing", async () => {
    const { owner, stacks, deployment } = await threeStacks();
    const [a, b, c] = stacks as [string, string, string];
    // Reported out of order: recorded in stack_ids order, after the deployment's own entry.
    const running = await reportOk(deployment.id, {
      status: "in_progress",
      stacks: [
        { id: c, status: "in_progress" },
        { id: a, status: "failed", status_reason: "quota" },
      ],
    });
    // The same statuses again, or only a new reason: no status entered, no entry.
    await reportOk(deployment.id, {
      status: "in_progress",
      stacks: [{ id: c, status: "in_progress", status_reason: "halfway" }],
    });
    await reportOk(deployment.id, { status: "in_progress", stacks: [{ id: b, status: "in_progress" }] });
    // Refused moves record nothing.
    expect((await report(deployment.id, { status: "queued" })).status).toBe(409);
    const done = await reportOk(deployment.id, {
      status: "succeeded",
      stacks: [{ id: c, status: "succeeded" }],
    });
    const timeline = await timelineOf(owner.key, deployment.id);
    expect(brief(timeline)).toEqual([
      "status:-:queued",
      "status:-:in_progress",
      `status:${a}:failed`,
      `status:${c}:in_progress`,
      `status:${b}:in_progress`,
      "status:-:succeeded",
      // The roll-up: every stack not yet final takes the deployment's final status.
      `status:${b}:succeeded`,
      `status:${c}:succeeded`,
    ]);
    expect(timeline.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(timeline[2]).toMatchObject({ status_reason: "quota", created_at: running.updated_at });
    expect(timeline.slice(5).map((e) => e.created_at)).toEqual([
      done.finished_at,
      done.finished_at,
      done.finished_at,
    ]);
    for (const entry of timeline) expect(entry.created_at).toMatch(TS);
  });

  it("a user's cancel records the deployment's entry and each unfinished stack's", async () => {
    const { owner, stacks, deployment } = await threeStacks();
    await reportOk(deployment.id, {
      status: "in_progress",
      stacks: [{ id: stacks[1], status: "failed" }],
    });
    const cancelled = await request<DeploymentRecord>("PATCH", `/v1/deployments/${deployment.id}/cancel`, {
      key: owner.key,
    });
    expect(cancelled.status).toBe(200);
    expect(brief(await timelineOf(owner.key, deployment.id))).toEqual([
      "status:-:queued",
      "status:-:in_progress",
      `status:${stacks[1]}:failed`,
      "status:-:cancelled",
      `status:${stacks[0]}:cancelled`,
      `status:${stacks[2]}:cancelled`,
    ]);
  });

  it("log lines and status changes share one numbering, in the order they were recorded", async () => {
    const { owner, stacks, deployment } = await threeStacks();
    expect((await postLogs(deployment.id, [{ message: "pulling", stream: "stderr" }])).body).toEqual({
      first_seq: 2,
      last_seq: 2,
    });
    await reportOk(deployment.id, { status: "in_progress" });
    expect(
      (await postLogs(deployment.id, [{ message: "built", stack_id: stacks[0] }, { message: "up" }])).body,
    ).toEqual({
      first_seq: 4,
      last_seq: 5,
    });
    const timeline = await timelineOf(owner.key, deployment.id);
    expect(brief(timeline)).toEqual([
      "status:-:queued",
      "log:pulling",
      "status:-:in_progress",
      "log:built",
      "log:up",
    ]);
    expect(timeline[1]).toMatchObject({
      type: "log",
      stream: "stderr",
      stack_id: null,
      status: null,
      status_reason: null,
    });
    expect(timeline[3]).toMatchObject({ stream: "stdout", stack_id: stacks[0] });
  });

  it("pages: `limit` (default 100, up to 1000), `next_page` into `after`, or `after_seq`", async () => {
    const { owner, deployment } = await threeStacks();
    await postLogs(deployment.id, logLines(1000));
    await postLogs(deployment.id, logLines(200, "more"));
    const path = `/v1/deployments/${deployment.id}/timeline`;
    const first = await request<Page>("GET", path, { key: owner.key });
    expect(first.body.data.map((e) => e.seq)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(first.body.has_more).toBe(true);
    const second = await request<Page>(
      "GET",
      `${path}?after=${encodeURIComponent(first.body.next_page ?? "")}&limit=1000`,
      {
        key: owner.key,
      },
    );
    expect(second.body.data.map((e) => e.seq)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 101));
    const last = await request<Page>(
      "GET",
      `${path}?after=${encodeURIComponent(second.body.next_page ?? "")}&limit=1000`,
      {
        key: owner.key,
      },
    );
    expect(last.body.data.map((e) => e.seq)).toEqual(Array.from({ length: 101 }, (_, i) => i + 1101));
    expect(last.body).not.toHaveProperty("next_page");
    expect(last.body.has_more).toBe(false);
    // URL-safe base64 and a space for `+` are the same cursor (API_CONTRACT §4).
    const urlSafe = (first.body.next_page ?? "").replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    expect(
      (await request<Page>("GET", `${path}?after=${urlSafe}&limit=1`, { key: owner.key })).body.data[0]?.seq,
    ).toBe(101);
    const bySeq = await request<Page>("GET", `${path}?after_seq=1199&limit=5`, { key: owner.key });
    expect(bySeq.body.data.map((e) => e.seq)).toEqual([1200, 1201]);
    expect((await request<Page>("GET", `${path}?after_seq=5000`, { key: owner.key })).body).toEqual({
      data: [],
      has_more: false,
    });
  });

  it("refuses `after` with `after_seq`, bad positions and limits, and another list's cursor", async () => {
    const { owner, environmentId, deployment } = await threeStacks();
    await createDeployment(environmentId, deployment.stack_ids);
    const path = `/v1/deployments/${deployment.id}/timeline`;
    const list = await request<{ next_page: string }>(
      "GET",
      `/v1/environments/${environmentId}/deployments?limit=1`,
      {
        key: owner.key,
      },
    );
    const cases: Array<[string, string]> = [
      ["?after_seq=0&after=eyJ2IjoxfQ", "after_seq"],
      ["?after_seq=-1", "after_seq"],
      ["?after_seq=1.5", "after_seq"],
      ["?after_seq=abc", "after_seq"],
      ["?after_seq=", "after_seq"],
      ["?limit=0", "limit"],
      ["?limit=1001", "limit"],
      ["?after=not%20base64!", "after"],
      [`?after=${encodeURIComponent(list.body.next_page)}`, "after"],
    ];
    for (const [query, field] of cases) {
      expectError(await request("GET", `${path}${query}`, { key: owner.key }), 400, "bad_input", field);
    }
    // `after_seq` is any integer ≥ 0 (§19): one past every entry, however long, is an empty page.
    for (const past of ["9007199254740992", "9".repeat(40)]) {
      const res = await request<{ data: unknown[] }>("GET", `${path}?after_seq=${past}`, { key: owner.key });
      expect([res.status, res.body.data], past).toEqual([200, []]);
    }
    // What is not decimal digits is told so, not zod's "expected number, received NaN".
    for (const query of ["?after_seq=-1", "?after_seq=abc", "?limit=1.5"]) {
      const res = await request<{ cause: { message: string }[] }>("GET", `${path}${query}`, {
        key: owner.key,
      });
      expect(res.raw).not.toMatch(/NaN/);
      expect(res.body.cause[0]?.message).toMatch(/whole number written in decimal digits/);
    }
    // A number out of range is told its bound.
    const zero = await request<{ cause: { message: string }[] }>("GET", `${path}?limit=0`, {
      key: owner.key,
    });
    expect(zero.body.cause[0]?.message).not.toMatch(/decimal digits/);
    expect(zero.body.cause[0]?.message).toMatch(/1/);
  });

  it("an unknown deployment is 404, a malformed id 400", async () => {
    const { owner } = await threeStacks();
    expectError(
      await request("GET", `/v1/deployments/${UNKNOWN_ID}/timeline`, { key: owner.key }),
      404,
      "not_found",
    );
    expectError(await request("GET", "/v1/deployments/nope/timeline", { key: owner.key }), 400, "bad_input");
  });

  it("answers 304 to If-None-Match while nothing was recorded", async () => {
    const { owner, deployment } = await threeStacks();
    const path = `/v1/deployments/${deployment.id}/timeline`;
    const tag = (await request("GET", path, { key: owner.key })).headers.get("etag") ?? "";
    expect((await request("GET", path, { key: owner.key, headers: { "if-none-match": tag } })).status).toBe(
      304,
    );
    await postLogs(deployment.id, logLines(1));
    expect((await request("GET", path, { key: owner.key, headers: { "if-none-match": tag } })).status).toBe(
      200,
    );
  });

  runCommonRouteTests(
    "GET /v1/deployments/{id}/timeline",
    deploymentRoute((_, d) => `/v1/deployments/${d.id}/timeline`),
  );
});

describe("GET /v1/deployments/{id}/timeline (live stream)", () => {
  const STREAM = { accept: "text/event-stream" };

  it("a final deployment's stream sends every entry, then `end` with the record, and closes at once", async () => {
    const { owner, stacks, deployment } = await threeStacks();
    await postLogs(deployment.id, [{ message: "hello", stack_id: stacks[2] }]);
    const cancelled = await reportOk(deployment.id, { status: "cancelled" });
    // Read whole by the shared client, which checks each event against /openapi.json.
    const res = await request("GET", `/v1/deployments/${deployment.id}/timeline`, {
      key: owner.key,
      headers: STREAM,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("etag")).toBeNull();
    const events = parseEventStream(res.raw);
    expect(events.map((e) => [e.id, e.event])).toEqual([
      ["1", "status"],
      ["2", "log"],
      ["3", "status"],
      ["4", "status"],
      ["5", "status"],
      ["6", "status"],
      [undefined, "end"],
    ]);
    const timeline = await timelineOf(owner.key, deployment.id);
    expect(events.slice(0, -1).map((e) => JSON.parse(e.data))).toEqual(timeline);
    expect(JSON.parse(events[6]?.data ?? "")).toEqual(cancelled);
    expect(res.raw).toMatch(/^id: 1\nevent: status\ndata: \{"seq":1,/);
  });

  it("starts after `Last-Event-ID`, which wins over `after_seq`, or after `after_seq` or `after`", async () => {
    const { owner, deployment } = await threeStacks();
    await postLogs(deployment.id, logLines(5));
    await reportOk(deployment.id, { status: "cancelled" });
    const path = `/v1/deployments/${deployment.id}/timeline`;
    const seqs = async (query: string, headers: Record<string, string> = {}) => {
      const res = await request("GET", `${path}${query}`, {
        key: owner.key,
        headers: { ...STREAM, ...headers },
      });
      return parseEventStream(res.raw).map((e) => e.id ?? e.event);
    };
    expect(await seqs("?after_seq=4")).toEqual(["5", "6", "7", "8", "9", "10", "end"]);
    expect(await seqs("?after_seq=1", { "last-event-id": "8" })).toEqual(["9", "10", "end"]);
    expect(await seqs("", { "last-event-id": "10" })).toEqual(["end"]);
    expect(await seqs("?after_seq=99")).toEqual(["end"]);
    const page = await request<Page>("GET", `${path}?limit=7`, { key: owner.key });
    expect(await seqs(`?after=${encodeURIComponent(page.body.next_page ?? "")}`)).toEqual([
      "8",
      "9",
      "10",
      "end",
    ]);
  });

  it("refuses like the JSON form, before any event: a JSON error, and a malformed Last-Event-ID", async () => {
    const { owner, deployment } = await threeStacks();
    const path = `/v1/deployments/${deployment.id}/timeline`;
    for (const bad of ["abc", "-1", "1.5", "9".repeat(16)]) {
      const res = await openStream(path, owner.key, { "last-event-id": bad });
      expect([res.status, (res.error as ErrorBody).code], bad).toEqual([400, "bad_input"]);
      expect((res.error as ErrorBody).cause?.[0]?.path).toBe("header.last-event-id");
    }
    const unknown = await openStream(`/v1/deployments/${UNKNOWN_ID}/timeline`, owner.key);
    expect([unknown.status, (unknown.error as ErrorBody).code]).toEqual([404, "not_found"]);
    expect(unknown.headers.get("content-type")).toMatch(/^application\/json/);
    const both = await openStream(`${path}?after_seq=1&after=eyJ2IjoxfQ`, owner.key);
    expect(both.status).toBe(400);
  });

  it("is chosen by Accept: `text/event-stream` rated at least as high as JSON", async () => {
    const { owner, deployment } = await threeStacks();
    await reportOk(deployment.id, { status: "cancelled" });
    const path = `/v1/deployments/${deployment.id}/timeline`;
    const typeFor = async (accept: string) =>
      (await request("GET", path, { key: owner.key, headers: { accept } })).headers.get("content-type");
    expect(await typeFor("text/event-stream")).toBe("text/event-stream");
    expect(await typeFor("text/event-stream, */*;q=0.1")).toBe("text/event-stream");
    expect(await typeFor("application/json, text/event-stream;q=0.5")).toMatch(/^application\/json/);
    expect(await typeFor("*/*")).toMatch(/^application\/json/);
    expect(await typeFor("text/event-stream;q=0")).toMatch(/^application\/json/);
  });

  it("sends each new entry as it is recorded — log lines, stack and deployment statuses — then `end`", async () => {
    const { owner, stacks, deployment } = await threeStacks();
    const stream = await openStream(`/v1/deployments/${deployment.id}/timeline`, owner.key);
    expect(stream.status).toBe(200);
    expect((await nextEntries(stream, 1)).map((e) => e.status)).toEqual(["queued"]);
    await postLogs(deployment.id, [{ message: "pulling image" }, { message: "oops", stream: "stderr" }]);
    expect(brief(await nextEntries(stream, 2))).toEqual(["log:pulling image", "log:oops"]);
    await reportOk(deployment.id, {
      status: "in_progress",
      stacks: [{ id: stacks[1], status: "in_progress" }],
    });
    expect(brief(await nextEntries(stream, 2))).toEqual([
      "status:-:in_progress",
      `status:${stacks[1]}:in_progress`,
    ]);
    const done = await reportOk(deployment.id, { status: "failed" });
    const rest = await readToEnd(stream);
    expect(brief(rest.entries)).toEqual([
      "status:-:failed",
      `status:${stacks[0]}:failed`,
      `status:${stacks[1]}:failed`,
      `status:${stacks[2]}:failed`,
    ]);
    expect(rest.end).toEqual(done);
    expect(rest.entries.map((e) => e.seq)).toEqual([6, 7, 8, 9]);
  });

  it("counts once against the rate limit, however long it stays open", async () => {
    const { owner, deployment } = await threeStacks();
    const production = { ...env, ...PRODUCTION_LIMITS };
    const fetcher = async (req: Request) => createApp().fetch(req, production, createExecutionContext());
    const path = `/v1/deployments/${deployment.id}/timeline`;
    const stream = await openStream(path, owner.key, {}, fetcher);
    const left = Number(stream.headers.get("x-ratelimit-remaining"));
    await nextEntries(stream, 1);
    await postLogs(deployment.id, logLines(3));
    await nextEntries(stream, 3);
    const after = await fetcher(
      new Request(`http://api.test${path}`, { headers: { "x-api-key": owner.key } }),
    );
    expect(Number(after.headers.get("x-ratelimit-remaining"))).toBe(left - 1);
    await stream.cancel();
  });
});
