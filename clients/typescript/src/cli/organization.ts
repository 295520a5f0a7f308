/** `limits`: what the organization may hold and how close it is (API_CONTRACT §29). */
import type { Argv } from "yargs";
import { unwrapData } from "../errors.js";
import type { OrgLimits } from "../types.js";
import type { Context, GlobalArgs } from "./context.js";
import { printJson, table } from "./io.js";

/** How close a count is to its limit, as a person reads it at a glance. */
export function closeness(used: number, limit: number): string {
  if (limit === 0) return used > 0 ? "over" : "none allowed";
  const share = Math.floor((used / limit) * 100);
  if (used > limit) return `over (${share}%)`;
  if (used === limit) return "full";
  return share >= 80 ? `${share}% (near)` : `${share}%`;
}

/** The limits as a table: NAME, USED/LIMIT, how close, and when the daily window frees one. */
export function limitsTable(record: OrgLimits): string {
  return table(
    ["NAME", "USED", "LIMIT", "USE", "FREES IN"],
    record.limits.map((l) => [
      l.name,
      l.used,
      l.limit,
      closeness(l.used, l.limit),
      !("reset" in l) ? "" : l.reset === 0 ? "-" : `${l.reset}s`,
    ]),
  );
}

export function registerOrganization(program: Argv, ctx: Context): void {
  program.command<GlobalArgs>(
    "limits",
    "Show what your organization may hold, how much it holds, and how close each is to its limit",
    () => {},
    (args) =>
      ctx.run(args, async ({ client, json, io }) => {
        const key = unwrapData(await client.GET("/v1/api-keys/current"));
        const record = unwrapData(
          await client.GET("/v1/orgs/{org_id}/limits", { params: { path: { org_id: key.org_id } } }),
        );
        if (json) return printJson(io, record);
        io.stdout.write(limitsTable(record));
        const full = record.limits.filter((l) => l.used >= l.limit).map((l) => l.name);
        if (full.length > 0)
          io.stderr.write(
            `at the limit: ${full.join(", ")} (a create is refused with 409 until one is freed)\n`,
          );
      }),
  );
}
