import type { OpenAPIHono } from "@hono/zod-openapi";
import * as z from "zod";
import { LIVE_STREAMS_PER_FAMILY, STREAM_LEASE_MS } from "../../config";
import { decodeSeqCursor } from "../../db/pagination";
import { badInput } from "../../errors";
import type { AppEnv } from "../../http/app-env";
import { acceptsEventStream, eventStream, type SseEvent, type SseSource } from "../../http/sse";
import { STREAM_BUFFER_BUDGET } from "../../lib/stream-buffers";
import { callerContext } from "../../middleware/context";
import { NO_STORE_HEADER } from "../../openapi/components";
import { ETAG_HEADER } from "../../openapi/conditional";
import { defineRoute } from "../../openapi/define-route";
import { envelope, listQuery, pageLimit, sequencePosition } from "../../openapi/lists";
import type { StreamPlace } from "../../rate-limit/stream-place";
import { TimelineEntrySchema } from "../../schemas/timeline";
import { type Follower, openFollow } from "../../services/deployments/follow";
import { getDeploymentTimeline, TIMELINE_CURSOR } from "../../services/deployments/timeline";
import { DeploymentParams } from "./schema";

/**
 * API_CONTRACT §19: a comment at least every 15 s while idle. Here every 5 s: a stream learns that
 * its client went away only by writing to it, and the runtime may take the first write after that
 * (into the connection's buffers), so it knows within two of them, ~10 s, and gives its place back
 * (§33: within 20 s of its client going away; at 10 s apart it took up to 19.8 s over `npm run dev`).
 */
export const KEEP_ALIVE_MS = 5_000;

const LAST_EVENT_ID_PARAMETER = "LastEventId";

/** A timeline page (API_CONTRACT §19): `seq` order only, so no `sort_by`; pages of 1–1000. */
const TIMELINE_MAX_LIMIT = 1000;
const TIMELINE_DEFAULT_LIMIT = 100;

const DeploymentTimelineSchema = envelope(TimelineEntrySchema, "DeploymentTimelinePage");

const TimelineQuerySchema = z.object({
  after: listQuery().shape.after,
  after_seq: sequencePosition().openapi({
    param: { name: "after_seq", in: "query" },
    description: "Start after this `seq` (not with `after`).",
    example: 0,
  }),
  limit: pageLimit(TIMELINE_MAX_LIMIT, TIMELINE_DEFAULT_LIMIT).openapi({
    param: { name: "limit", in: "query" },
    description: `Page size, 1–${TIMELINE_MAX_LIMIT}.`,
    example: TIMELINE_DEFAULT_LIMIT,
  }),
});

/** Where a stream starts: `Last-Event-ID` wins over `after_seq` and `after`. */
function lastEventId(header: string | undefined): number | undefined {
  if (header === undefined || header === "") return undefined;
  const seq = /^[0-9]{1,15}$/.test(header) ? Number(header) : Number.NaN;
  if (!Number.isSafeInteger(seq)) {
    throw badInput("The Last-Event-ID header is not a position of this timeline.", [
      { path: "header.last-event-id", message: "Expected the `id` of an event of this stream (a `seq`)." },
    ]);
  }
  return seq;
}

/**
 * The follower's steps as Server-Sent Events. The follower checks the key and access before it
 * sends, and ends the stream on its own (`onEnd`) when it must stop while the client is not reading.
 * A heartbeat, four times a lease (5 s), renews the stream's place among its key family's
 * (API_CONTRACT §33; none when the limiter failed open) and ends the stream once another stream of
 * the isolate took its share of the buffer budget (src/lib/stream-buffers.ts); both end it in its
 * own request, whether or not its client reads. The place is given back when the stream ends.
 */
function followerEvents(follower: Follower, place: StreamPlace | undefined, beatMs: number): SseSource {
  let ended = false;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  return {
    async next(idleMs): Promise<SseEvent[] | null> {
      if (ended) return null;
      const step = await follower.next(idleMs);
      switch (step.kind) {
        case "entries":
          return step.entries.map((e) => ({ id: String(e.seq), event: e.type, data: JSON.stringify(e) }));
        case "end":
          ended = true;
          return [{ event: "end", data: JSON.stringify(step.deployment) }];
        case "idle":
          return [];
        case "lost":
          return null;
      }
    },
    close: () => {
      clearInterval(heartbeat);
      follower.close();
      place?.release();
    },
    start: (end) => {
      follower.onEnd(end);
      place?.hold();
      heartbeat = setInterval(() => {
        if (follower.endIfDropped() || !place) return;
        void place.renew().then((kept) => kept || end());
      }, beatMs);
    },
  };
}

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/deployments/{id}/timeline",
    operationId: "getDeploymentTimeline",
    tags: ["Deployments"],
    summary: "Follow a deployment: its status changes and log lines, as pages or live",
    description:
      "Status changes (the deployment's, its stacks') and log lines, numbered `seq`. JSON: a page. With " +
      "`Accept: text/event-stream`, live from `Last-Event-ID`: `id: <seq>`, `event: status|log`, `data: " +
      "<entry>`; `: keep-alive` every ≤15 s; once final, `event: end` (data: the deployment), then closed; " +
      "15 min at most. One request; no query while idle. Kept 30 days after the end. Project role `viewer` " +
      `or above. ≤ ${LIVE_STREAMS_PER_FAMILY} open per key family (else \`429\` until one ends, or its client is gone ` +
      `${STREAM_LEASE_MS / 1000} s); an isolate's streams share ${STREAM_BUFFER_BUDGET / 1024 / 1024} MiB of unread ` +
      "entries, one over its share ends.",
    liveStream: true,
    request: { params: DeploymentParams, query: TimelineQuerySchema },
    // Read by the handler (malformed: `400`, cause `header.last-event-id`); published once, as a component.
    parameters: [{ $ref: `#/components/parameters/${LAST_EVENT_ID_PARAMETER}` }],
    responses: {
      200: {
        description: "A page, or the live stream.",
        headers: { ...ETAG_HEADER, ...NO_STORE_HEADER },
        content: {
          "application/json": { schema: DeploymentTimelineSchema },
          "text/event-stream": {
            // Each event's `data`, by its `event` name (OpenAPI 3.1 has no keyword for it).
            "x-sse-events": {
              status: { $ref: "#/components/schemas/DeploymentTimelineEntry" },
              log: { $ref: "#/components/schemas/DeploymentTimelineEntry" },
              end: { $ref: "#/components/schemas/Deployment" },
            },
            schema: z.string().openapi({
              example: "id: 2\nevent: log\ndata: {…}\n\n",
            }),
          },
        },
      },
    },
  });
  app.openAPIRegistry.registerComponent("parameters", LAST_EVENT_ID_PARAMETER, {
    name: "Last-Event-ID",
    in: "header",
    required: false,
    // No `example`: /docs would send it, and a first try would skip the entries before it.
    description: "The last `id` received (`42`); wins over `after_seq` and `after`.",
    schema: { type: "string", pattern: "^[0-9]{1,15}$", maxLength: 15 },
  });
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const query = c.req.valid("query");
    if (query.after !== undefined && query.after_seq !== undefined) {
      throw badInput("Give the position as `after` or as `after_seq`, not both.", [
        { path: "after_seq", message: "Not allowed together with `after`." },
      ]);
    }
    const afterSeq =
      query.after_seq ?? (query.after === undefined ? 0 : decodeSeqCursor(query.after, TIMELINE_CURSOR));
    if (!acceptsEventStream(c.req.header("accept"))) {
      const page = await getDeploymentTimeline(callerContext(c), id, { afterSeq, limit: query.limit });
      return c.json(page, 200);
    }
    const from = lastEventId(c.req.header("last-event-id")) ?? afterSeq;
    const ctx = callerContext(c);
    const follower = await openFollow(ctx, id, from);
    const place = c.get("streamPlace");
    const body = eventStream(followerEvents(follower, place, ctx.config.streamLeaseMs / 4), {
      keepAliveMs: KEEP_ALIVE_MS,
      maxMs: ctx.config.streamMaxMs,
    });
    return new Response(body, {
      status: 200,
      headers: { "content-type": "text/event-stream", "cache-control": "no-store" },
    });
  });
}
