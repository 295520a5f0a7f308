/**
 * `audit tail` (the organization's audit log as it grows, by `after_sequence`, like `tail -f`) and
 * `audit streams list | create | get | update | delete | replay` (API_CONTRACT §30).
 */
import type { Argv } from "yargs";
import type { DeployClient } from "../client.js";
import { unwrapData } from "../errors.js";
import type { AuditEntry, AuditStream, AuditStreamCreate } from "../types.js";
import type { Context, GlobalArgs } from "./context.js";
import { commandGroup } from "./group.js";
import { fields, printJson, table, UsageError } from "./io.js";
import { collect, type ListArgs, listOptions } from "./list.js";

/** The organization of the key in use. */
async function orgOf(client: DeployClient): Promise<string> {
  return unwrapData(await client.GET("/v1/api-keys/current")).org_id;
}

/** One entry as a line: `<sequence> <time> <action> <target> by <actor>`. */
export function entryLine(e: AuditEntry): string {
  const actor = e.actor.type === "admin" ? "admin" : `account ${e.actor.account_id ?? "-"}`;
  return `${e.sequence} ${e.created_at} ${e.action} ${e.target.type}:${e.target.id} by ${actor}\n`;
}

type TailArgs = GlobalArgs & { lines: number; from?: number; follow: boolean; interval: number };

export function registerAudit(program: Argv, ctx: Context): void {
  commandGroup(program, "audit", "The audit log: follow it, or stream it to your own systems", AUDIT, (y) =>
    commandGroup(
      y.command<TailArgs>(
        "tail",
        "Print the last entries of the organization's audit log, then each new one as it is committed",
        (y) =>
          y
            .option("lines", {
              alias: "n",
              type: "number",
              default: 10,
              describe: "How many of the last entries first (0: none, only what comes next)",
            })
            .option("from", {
              type: "number",
              describe: "Start after this sequence instead (0: from the first)",
            })
            .option("follow", {
              alias: "f",
              type: "boolean",
              default: true,
              describe: "Keep following (--no-follow: print and exit)",
            })
            .option("interval", {
              type: "number",
              default: 2,
              describe: "Seconds between reads while following",
            }),
        (args) =>
          ctx.run(args, async ({ client, json, io }) => {
            if (args.from !== undefined && (!Number.isSafeInteger(args.from) || args.from < 0))
              throw new UsageError("--from must be a sequence (an integer ≥ 0)");
            if (args.from === undefined && (!Number.isSafeInteger(args.lines) || args.lines < 0))
              throw new UsageError("--lines must be a number of entries (an integer ≥ 0)");
            if (!(args.interval > 0)) throw new UsageError("--interval must be a number of seconds > 0");
            const org = await orgOf(client);
            const print = (e: AuditEntry) => io.stdout.write(json ? `${JSON.stringify(e)}\n` : entryLine(e));
            // One page of the organization's log: newest first, or after a sequence in sequence order.
            const page = async (query: { limit: number; after?: string; after_sequence?: number }) =>
              unwrapData(
                await client.GET("/v1/orgs/{org_id}/audit-log", { params: { path: { org_id: org }, query } }),
              ) as { data: AuditEntry[]; next_page?: string };
            let after = args.from;
            if (after === undefined) {
              // The last `n` entries (newest first, a page of at most 240 at a time), printed oldest
              // first; with none asked for, the newest one only says where following starts.
              const newest: AuditEntry[] = [];
              let older: string | undefined;
              do {
                const read = await page({
                  limit: Math.min(240, Math.max(1, args.lines - newest.length)),
                  after: older,
                });
                newest.push(...read.data);
                older = read.data.length > 0 ? read.next_page : undefined;
              } while (older && newest.length < args.lines);
              after = newest[0]?.sequence ?? 0;
              for (const e of newest.slice(0, args.lines).reverse()) print(e);
            }
            for (;;) {
              // Every entry after the last one printed, page by page, in sequence order.
              let cursor: string | undefined;
              do {
                const read = await page({ after_sequence: after, limit: 240, after: cursor });
                for (const e of read.data) print(e);
                after = read.data.at(-1)?.sequence ?? after;
                // A page with nothing in it ends the round, whatever it says of more.
                cursor = read.data.length > 0 ? read.next_page : undefined;
              } while (cursor);
              if (!args.follow || io.signal?.aborted) return;
              await (io.sleep ?? ((ms: number) => new Promise((resolve) => setTimeout(resolve, ms))))(
                args.interval * 1000,
              );
              if (io.signal?.aborted) return;
            }
          }),
      ),
      "streams",
      "Streams of the audit log to your own systems (NDJSON batches, signed)",
      STREAMS,
      (y) => registerStreams(y, ctx),
      "audit streams",
    ),
  );
}

/** `audit`'s commands, and those of `audit streams`, as their help lists them. */
const AUDIT = ["tail", "streams"] as const;
const STREAMS = ["list", "create", "get", "update", "replay", "delete"] as const;

/** A stream as fields; its secret only when it was just made. */
function streamFields(s: AuditStream): string {
  return fields([
    ["stream", s.id],
    ["name", s.name],
    ["url", s.url],
    ["enabled", s.enabled ? "yes" : "no (paused)"],
    ["delivered through", s.delivered_through],
    ["pending", s.pending],
    [
      "last error",
      s.last_error ? `${s.last_error.at} ${s.last_error.status_code ?? "-"} ${s.last_error.message}` : "-",
    ],
  ]);
}

type StreamArgs = GlobalArgs & { id: string };

function registerStreams(y: Argv, ctx: Context): Argv {
  return y
    .command<GlobalArgs & ListArgs>(
      "list",
      "List the organization's audit log streams",
      (y) => listOptions(y),
      (args) =>
        ctx.run(args, async ({ client, json, io }) => {
          const org = await orgOf(client);
          const list = await collect<AuditStream>(args, (after, limit) =>
            client.GET("/v1/orgs/{org_id}/audit-streams", {
              params: { path: { org_id: org }, query: { after, limit } },
            }),
          );
          if (json) return printJson(io, list);
          io.stdout.write(
            table(
              ["ID", "NAME", "ENABLED", "DELIVERED", "PENDING", "LAST ERROR"],
              list.data.map((s) => [
                s.id,
                s.name,
                s.enabled ? "yes" : "paused",
                s.delivered_through,
                s.pending,
                s.last_error?.message,
              ]),
            ),
          );
          if (list.next_page) io.stderr.write(`more: --after ${list.next_page} (or --all)\n`);
        }),
    )
    .command<GlobalArgs & { name: string; streamUrl: string; paused?: boolean; fromStart?: boolean }>(
      "create",
      "Stream the audit log to a URL; shows the signing secret once",
      (y) =>
        y
          .option("name", { type: "string", demandOption: true, describe: "A name (1–100 characters)" })
          .option("stream-url", {
            type: "string",
            demandOption: true,
            describe: "Where batches are POSTed (https:// to a public host)",
          })
          .option("paused", {
            type: "boolean",
            describe: "Create it paused (enable it with `update --enable`)",
          })
          .option("from-start", {
            type: "boolean",
            describe: "Send the organization's log from its first entry (default: from now)",
          }),
      (args) =>
        ctx.run(args, async ({ client, json, io }) => {
          const org = await orgOf(client);
          const body: AuditStreamCreate = { name: args.name, url: args.streamUrl };
          if (args.paused) body.enabled = false;
          if (args.fromStart) body.from = "start";
          const created = unwrapData(
            await client.POST("/v1/orgs/{org_id}/audit-streams", { params: { path: { org_id: org } }, body }),
          );
          if (json) return printJson(io, created);
          io.stdout.write(streamFields(created));
          io.stdout.write(`\n${created.signing_secret}\n`);
          io.stderr.write(
            "This is the only time the signing secret is shown: store it where the receiver verifies batches.\n",
          );
        }),
    )
    .command<StreamArgs>(
      ["get <id>", "show"],
      "Show a stream: how far its receiver acknowledged, what is pending, its last error",
      (y) => y.positional("id", { type: "string", demandOption: true }),
      (args) =>
        ctx.run(args, async ({ client, json, io }) => {
          const stream = unwrapData(
            await client.GET("/v1/audit-streams/{id}", { params: { path: { id: args.id } } }),
          );
          if (json) return printJson(io, stream);
          io.stdout.write(streamFields(stream));
        }),
    )
    .command<StreamArgs & { name?: string; streamUrl?: string; enable?: boolean; pause?: boolean }>(
      "update <id>",
      "Rename a stream, send it elsewhere, pause or resume it",
      (y) =>
        y
          .positional("id", { type: "string", demandOption: true })
          .option("name", { type: "string" })
          .option("stream-url", { type: "string", describe: "Send to this URL from now on" })
          .option("enable", { type: "boolean", describe: "Resume: send from delivered_through + 1" })
          .option("pause", { type: "boolean", describe: "Pause: send nothing until resumed" })
          .conflicts("enable", "pause"),
      (args) =>
        ctx.run(args, async ({ client, json, io }) => {
          const body: { name?: string; url?: string; enabled?: boolean } = {};
          if (args.name !== undefined) body.name = args.name;
          if (args.streamUrl !== undefined) body.url = args.streamUrl;
          if (args.enable) body.enabled = true;
          if (args.pause) body.enabled = false;
          if (Object.keys(body).length === 0)
            throw new UsageError("nothing to change: --name, --stream-url, --enable or --pause");
          const stream = unwrapData(
            await client.PATCH("/v1/audit-streams/{id}", { params: { path: { id: args.id } }, body }),
          );
          if (json) return printJson(io, stream);
          io.stdout.write(streamFields(stream));
        }),
    )
    .command<StreamArgs & { from: number }>(
      "replay <id>",
      "Send a stream's entries again from a sequence (1 to delivered_through + 1)",
      (y) =>
        y.positional("id", { type: "string", demandOption: true }).option("from", {
          type: "number",
          demandOption: true,
          describe: "The first sequence to send again",
        }),
      (args) =>
        ctx.run(args, async ({ client, json, io }) => {
          if (!Number.isSafeInteger(args.from) || args.from < 1)
            throw new UsageError("--from must be a sequence (an integer ≥ 1)");
          const stream = unwrapData(
            await client.POST("/v1/audit-streams/{id}/replay", {
              params: { path: { id: args.id } },
              body: { from_sequence: args.from },
            }),
          );
          if (json) return printJson(io, stream);
          io.stdout.write(streamFields(stream));
        }),
    )
    .command<StreamArgs>(
      "delete <id>",
      "Delete a stream: nothing more is sent",
      (y) => y.positional("id", { type: "string", demandOption: true }),
      (args) =>
        ctx.run(args, async ({ client, io }) => {
          const res = await client.DELETE("/v1/audit-streams/{id}", { params: { path: { id: args.id } } });
          if (res.error) unwrapData(res);
          io.stderr.write(`deleted ${args.id}\n`);
        }),
    );
}
