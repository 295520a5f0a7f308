/** `deployments list | get | wait | follow | redeploy | cancel`. */
import type { Argv } from "yargs";
import { unwrapData } from "../errors.js";
import { follow } from "../follow.js";
import type { Deployment, TimelineEntry } from "../types.js";
import { waitForDeployment } from "../wait.js";
import type { Command, Context, GlobalArgs } from "./context.js";
import { commandGroup } from "./group.js";
import { EXIT, exitForStatus, fields, printJson, table, UsageError } from "./io.js";
import { collect, type ListArgs, listOptions } from "./list.js";
import { duration, progress } from "./progress.js";

const STATUSES = ["waiting", "queued", "in_progress", "succeeded", "failed", "cancelled"] as const;
type Status = (typeof STATUSES)[number];
type IdArgs = GlobalArgs & { id: string };
type WaitArgs = IdArgs & { timeout: number };

/** A `--timeout` in seconds (default 600): past it, the command gives up with exit code 3. */
export const timeoutOption = <T>(y: Argv<T>, what: string) =>
  y.option("timeout", {
    type: "number",
    default: 600,
    describe: `Seconds to ${what} before giving up with exit code 3`,
    coerce: (seconds: number) => {
      if (!Number.isFinite(seconds) || seconds < 0)
        throw new UsageError("--timeout takes a number of seconds ≥ 0");
      return seconds;
    },
  });

export function registerDeployments(program: Argv, ctx: Context): void {
  const id = <T>(y: Argv<T>) =>
    y.positional("id", { type: "string", demandOption: true, describe: "The deployment's ID" });
  const timeout = timeoutOption;

  commandGroup(
    program,
    "deployments",
    "Deployments",
    ["list", "get", "wait", "follow", "redeploy", "cancel"],
    (y) =>
      y
        .command<GlobalArgs & ListArgs & { environment?: string; stack?: string; status?: Status[] }>(
          "list",
          "List deployments (of every project you may see, or of one environment or stack)",
          (y) =>
            listOptions(y)
              .option("environment", { type: "string", describe: "Only this environment's deployments" })
              .option("stack", { type: "string", describe: "Only the deployments of this stack" })
              .option("status", {
                type: "string",
                array: true,
                choices: STATUSES,
                describe: "Only these statuses (repeat)",
              })
              .conflicts("environment", "stack"),
          (args) =>
            ctx.run(args, async ({ client, json, io }) => {
              const status = args.status;
              const list = await collect<Deployment>(args, (after, limit) => {
                const query = { after, limit, status };
                if (args.environment)
                  return client.GET("/v1/environments/{environment_id}/deployments", {
                    params: { path: { environment_id: args.environment }, query },
                  });
                if (args.stack)
                  return client.GET("/v1/stacks/{stack_id}/deployments", {
                    params: { path: { stack_id: args.stack }, query },
                  });
                return client.GET("/v1/deployments", { params: { query } });
              });
              if (json) return printJson(io, list);
              io.stdout.write(
                table(
                  ["ID", "STATUS", "ENVIRONMENT", "STACKS", "CREATED", "FINISHED"],
                  list.data.map((d) => [
                    d.id,
                    d.status,
                    d.environment_id,
                    d.stack_ids.length,
                    d.created_at,
                    d.finished_at,
                  ]),
                ),
              );
              if (list.next_page) io.stderr.write(`more: --after ${list.next_page} (or --all)\n`);
            }),
        )
        .command<IdArgs>(
          ["get <id>", "show"],
          "Show a deployment and its stacks",
          (y) => id(y),
          (args) =>
            ctx.run(args, async ({ client, json, io }) => {
              const d = unwrapData(
                await client.GET("/v1/deployments/{id}", { params: { path: { id: args.id } } }),
              );
              if (json) return printJson(io, d);
              printDeployment(io, d as Deployment);
            }),
        )
        .command<WaitArgs>(
          "wait <id>",
          "Wait until a deployment is final; the exit code says how it ended (0 succeeded, 1 failed, 2 cancelled, 3 timed out)",
          (y) => timeout(id(y), "wait"),
          (args) => ctx.run(args, (command) => waitCommand(command, args.id, args.timeout)),
        )
        .command<WaitArgs & { afterSeq?: number }>(
          "follow <id>",
          "Print a deployment's status changes and log as they happen, until it is final (exit codes as wait)",
          (y) =>
            timeout(id(y), "follow").option("after-seq", {
              type: "number",
              describe: "Start after this entry (seq) instead of at the beginning",
            }),
          (args) => ctx.run(args, (command) => followCommand(command, args.id, args.timeout, args.afterSeq)),
        )
        .command<IdArgs & { wait?: boolean; timeout: number }>(
          "redeploy <id>",
          "Run a deployment again: same environment, stacks, patch and source (retries a failed one, rolls back to an older one)",
          (y) =>
            timeout(id(y), "wait (with --wait)").option("wait", {
              type: "boolean",
              describe: "Then wait for the new deployment (exit codes as wait)",
            }),
          (args) =>
            ctx.run(args, async (command) => {
              const { client, json, io } = command;
              const created = unwrapData(
                await client.POST("/v1/deployments/{id}/redeploy", {
                  params: { path: { id: args.id } },
                  body: {},
                }),
              );
              if (!args.wait) {
                if (json) return printJson(io, created);
                io.stdout.write(`${created.id} ${created.status} (a redeploy of ${args.id})\n`);
                return;
              }
              if (!json) io.stderr.write(`${created.id} ${created.status} (a redeploy of ${args.id})\n`);
              return waitCommand(command, created.id, args.timeout);
            }),
        )
        .command<IdArgs>(
          "cancel <id>",
          "Cancel a queued or in-progress deployment",
          (y) => id(y),
          (args) =>
            ctx.run(args, async ({ client, json, io }) => {
              const d = unwrapData(
                await client.PATCH("/v1/deployments/{id}/cancel", { params: { path: { id: args.id } } }),
              );
              if (json) return printJson(io, d);
              io.stdout.write(`${d.id} ${d.status}\n`);
            }),
        ),
  );
}

export function printDeployment(io: Command["io"], d: Deployment): void {
  const rows: Array<[string, unknown]> = [
    ["id", d.id],
    ["status", d.status],
    ["environment", d.environment_id],
    ["created", d.created_at],
    ["started", d.started_at],
    ["finished", d.finished_at],
  ];
  if (d.gate) rows.splice(2, 0, ["waiting on", gateText(d.gate)]);
  if (d.promoted_from) rows.splice(3, 0, ["promoted from", d.promoted_from]);
  if (d.redeploy_of) rows.splice(3, 0, ["redeploy of", d.redeploy_of]);
  io.stdout.write(fields(rows));
  const stacks = d.data.stacks ?? [];
  if (stacks.length > 0) {
    io.stdout.write("\n");
    io.stdout.write(
      table(
        ["STACK", "STATUS", "SINCE", "REASON"],
        stacks.map((s) => [s.id, s.status, s.timestamp, s.status_reason]),
      ),
    );
  }
}

/** A limit on a long command: aborts `signal`'s work when `seconds` pass. */
function deadline(
  seconds: number,
  outer?: AbortSignal,
): { signal: AbortSignal; expired: () => boolean; clear: () => void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error("timeout")), seconds * 1000);
  const onOuter = () => controller.abort(outer?.reason);
  outer?.addEventListener("abort", onOuter, { once: true });
  return {
    signal: controller.signal,
    expired: () => controller.signal.aborted && !outer?.aborted,
    clear: () => {
      clearTimeout(timer);
      outer?.removeEventListener("abort", onOuter);
    },
  };
}

/** What holds a gated deployment: `approval (0 of 1), lock`, or `nothing` once released. */
export function gateText(gate: NonNullable<Deployment["gate"]>): string {
  if (gate.blocked_by.length === 0) return "nothing";
  return gate.blocked_by
    .map((b) =>
      b === "approval"
        ? `approval (${gate.approvals} of ${gate.required_approvals})`
        : b === "wait_timer"
          ? `wait timer (until ${gate.wait_until})`
          : "lock",
    )
    .join(", ");
}

export async function waitCommand(
  { client, json, io }: Command,
  id: string,
  seconds: number,
): Promise<number> {
  const started = Date.now();
  const spinner = progress(io.stderr, io.stderr.isTTY === true && !json, { since: started });
  const limit = deadline(seconds + 5, io.signal);
  try {
    const { deployment, timedOut } = await waitForDeployment(client, id, {
      timeoutMs: seconds * 1000,
      signal: limit.signal,
      onUpdate: (d) => spinner.update(`${d.id} ${d.status}`),
    });
    spinner.stop();
    if (json) printJson(io, deployment);
    if (timedOut) {
      if (!json) io.stdout.write(`${deployment.id} ${deployment.status}\n`);
      io.stderr.write(`timed out after ${seconds} s: ${deployment.id} is still ${deployment.status}\n`);
      return EXIT.timeout;
    }
    if (!json)
      io.stdout.write(`${deployment.id} ${deployment.status} after ${duration(Date.now() - started)}\n`);
    return exitForStatus(deployment.status);
  } catch (err) {
    spinner.stop();
    if (limit.expired()) {
      io.stderr.write(`timed out after ${seconds} s waiting for ${id}\n`);
      return EXIT.timeout;
    }
    throw err;
  } finally {
    limit.clear();
  }
}

export async function followCommand(
  { client, json, io }: Command,
  id: string,
  seconds: number,
  afterSeq: number | undefined,
): Promise<number> {
  const limit = deadline(seconds, io.signal);
  let last: TimelineEntry | undefined;
  // On a terminal, the deployment's status and the time since the command started stay in view
  // below the log (a gated deployment may wait long without a line).
  const spinner = progress(io.stderr, io.stderr.isTTY === true && !json, { since: Date.now() });
  const print = (line: string) => {
    spinner.clear();
    io.stdout.write(`${line}\n`);
  };
  try {
    for await (const event of follow(client, id, {
      afterSeq,
      signal: limit.signal,
      sleep: io.sleep,
      onReconnect: ({ afterSeq, delayMs }) => {
        spinner.clear();
        io.stderr.write(`connection lost; resuming after entry ${afterSeq} in ${duration(delayMs)}\n`);
      },
    })) {
      if (event.type === "end") {
        const d = event.deployment;
        spinner.stop();
        if (json) io.stdout.write(`${JSON.stringify({ type: "end", deployment: d })}\n`);
        else io.stdout.write(`${d.id} ${d.status}\n`);
        return exitForStatus(d.status);
      }
      last = event.entry;
      print(json ? JSON.stringify(event.entry) : entryLine(event.entry));
      if (event.entry.type === "status" && event.entry.stack_id === null)
        spinner.update(`${id} ${event.entry.status}`);
    }
    throw new Error(`the timeline stream of ${id} ended without its end event`);
  } catch (err) {
    spinner.stop();
    if (limit.expired()) {
      io.stderr.write(
        `timed out after ${seconds} s following ${id}${last ? ` (last entry ${last.seq}; resume with --after-seq ${last.seq})` : ""}\n`,
      );
      return EXIT.timeout;
    }
    throw err;
  } finally {
    limit.clear();
  }
}

/** `10:04:05 [stack 7Hq…] message`, or a status change as `→ status`. */
export function entryLine(e: TimelineEntry): string {
  const time = e.created_at.slice(11, 19);
  const who = e.stack_id ? `stack ${e.stack_id}` : "deployment";
  if (e.type === "status")
    return `${time} ${who} → ${e.status}${e.status_reason ? ` (${e.status_reason})` : ""}`;
  return `${time} ${e.stack_id ? `[${e.stack_id}] ` : ""}${e.stream === "stderr" ? "! " : ""}${e.message ?? ""}`;
}
