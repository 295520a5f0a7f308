/** Audit log streams (API_CONTRACT §30) for the tests: made through the API, received by the local receiver. */
import { Webhook } from "standardwebhooks";
import { expect } from "vitest";
import type { AuditEntryRecord } from "../../src/schemas/audit";
import type { AuditStreamRecord, CreatedAuditStreamRecord } from "../../src/schemas/audit-stream";
import { request } from "./api";
import type { Caller } from "./factories";
import { unique } from "./factories";
import { sleep } from "./wait";
import { hook, received, receiverOrigin } from "./webhooks";

export type Stream = AuditStreamRecord;

/** A bucket of the local receiver and the URL that delivers into it. */
export function receiverBucket() {
  const bucket = unique("stream");
  return { bucket, url: hook(bucket) };
}

/** The next requests of `bucket` answer these statuses in turn (test/global-setup-receiver.ts). */
export async function scriptReceiver(bucket: string, answers: number[], delayMs = 0) {
  const res = await fetch(`${receiverOrigin()}/script/${bucket}`, {
    method: "POST",
    body: JSON.stringify({ answers, delay_ms: delayMs }),
  });
  expect(res.status).toBe(204);
}

/** `POST /v1/orgs/{org_id}/audit-streams` that must create one. */
export async function createStream(
  caller: Caller,
  url: string,
  fields: Record<string, unknown> = {},
): Promise<CreatedAuditStreamRecord> {
  const res = await request<CreatedAuditStreamRecord>("POST", `/v1/orgs/${caller.orgId}/audit-streams`, {
    key: caller.key,
    body: { name: unique("siem"), url, ...fields },
  });
  if (res.status !== 201) throw new Error(`create stream → ${res.status} ${res.raw}`);
  return res.body;
}

export const readStream = async (caller: Caller, id: string) => {
  const res = await request<Stream>("GET", `/v1/audit-streams/${id}`, { key: caller.key });
  expect(res.status, res.raw).toBe(200);
  return res.body;
};

/** The stream once it has sent everything (its own creation's entry included): its last read. */
export const caughtUp = (caller: Caller, id: string, ms?: number) =>
  eventually(
    () => readStream(caller, id),
    (s) => s.pending === 0,
    ms,
  );

/** One batch as the receiver got it: its headers and its entries, line by line. */
export type Batch = {
  id: string;
  headers: Record<string, string>;
  body: string;
  entries: AuditEntryRecord[];
  /** When the receiver got it (ms). */
  at: number;
};

export async function batches(bucket: string): Promise<Batch[]> {
  return (await received(bucket)).map((r) => ({
    id: r.headers["webhook-id"] ?? "",
    at: r.at,
    headers: r.headers,
    body: r.body,
    entries: r.body
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as AuditEntryRecord),
  }));
}

/**
 * Reads every 50 ms until `check` holds of what `read` returns, and returns that value; throws,
 * with the last value read, when `ms` pass without it (a test never goes on from a wait that
 * failed: the comparisons after one could hold of what never moved).
 */
export async function eventually<T>(
  read: () => Promise<T>,
  check: (value: T) => boolean,
  ms = 10_000,
): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > until) {
      throw new Error(`still not so after ${ms} ms: ${JSON.stringify(value)?.slice(0, 2000)}`);
    }
    await sleep(50);
  }
}

/** Every sequence the receiver got, in the order it got them (a retried batch counted each time). */
export const sequencesReceived = async (bucket: string) =>
  (await batches(bucket)).flatMap((b) => b.entries.map((e) => e.sequence));

/**
 * A receiver's check of a batch's `webhook-signature` (Standard Webhooks, by the `standardwebhooks`
 * library's own signing: its `verify` parses the body as one JSON document, which NDJSON is not).
 */
export function verifiesBatch(secret: string, batch: Pick<Batch, "headers" | "body"> | undefined): boolean {
  if (!batch) return false;
  const id = batch.headers["webhook-id"] ?? "";
  const timestamp = Number(batch.headers["webhook-timestamp"]);
  const expected = new Webhook(secret).sign(id, new Date(timestamp * 1000), batch.body);
  return (batch.headers["webhook-signature"] ?? "").split(" ").includes(expected);
}
