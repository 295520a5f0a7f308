/** `whoami`, `projects list`, `keys create | list | get | revoke`. */
import type { Argv } from "yargs";
import { unwrap, unwrapData } from "../errors.js";
import type { ApiKeyCreate, ApiKeyRecord, Project } from "../types.js";
import type { Context, GlobalArgs } from "./context.js";
import { commandGroup } from "./group.js";
import { fields, printJson, table, UsageError } from "./io.js";
import { collect, type ListArgs, listOptions } from "./list.js";

export function registerAccount(program: Argv, ctx: Context): void {
  program.command<GlobalArgs>(
    "whoami",
    "Show the API key in use: its organization, account, scopes and projects",
    () => {},
    (args) =>
      ctx.run(args, async ({ client, json, io }) => {
        const key = unwrapData(await client.GET("/v1/api-keys/current"));
        if (json) return printJson(io, key);
        io.stdout.write(
          fields([
            ["key", key.id],
            ["name", key.name],
            ["organization", key.org_id],
            ["account", key.account_id],
            ["scopes", key.scopes],
            ["projects", key.project_ids ?? "all"],
            ["expires", key.expires_at ?? "never"],
          ]),
        );
      }),
  );

  commandGroup(program, "projects", "Projects you may see", ["list"], (y) =>
    y.command<GlobalArgs & ListArgs>(
      "list",
      "List the projects of your organization that you may see",
      (y) => listOptions(y),
      (args) =>
        ctx.run(args, async ({ client, json, io }) => {
          const list = await collect<Project>(args, (after, limit) =>
            client.GET("/v1/projects", { params: { query: { after, limit } } }),
          );
          if (json) return printJson(io, list);
          io.stdout.write(
            table(
              ["ID", "NAME", "CONNECTION", "DEFAULT ENVIRONMENT", "CREATED"],
              list.data.map((p) => [
                p.id,
                p.name,
                p.connection_status,
                p.default_environment_id,
                p.created_at,
              ]),
            ),
          );
          if (list.next_page) io.stderr.write(`more: --after ${list.next_page} (or --all)\n`);
        }),
    ),
  );

  commandGroup(
    program,
    "keys",
    "API keys that can do less than yours",
    ["create", "list", "get", "revoke"],
    (y) =>
      y
        .command<GlobalArgs & KeyCreateArgs>(
          "create",
          "Make a key that can do at most what yours can, for at most as long; shows the key once",
          (y) =>
            y
              .option("name", { type: "string", describe: "A name for the key (1–100 characters)" })
              .option("scope", {
                type: "string",
                array: true,
                describe: "A scope it may use (repeat; default: yours), e.g. deployments:read",
              })
              .option("project", {
                type: "string",
                array: true,
                describe: "A project it may see (repeat; default: yours)",
              })
              .option("all-projects", {
                type: "boolean",
                describe: "No project restriction (only from an unrestricted key)",
              })
              .option("expires-at", {
                type: "string",
                describe: "When it expires (RFC 3339), or `never` (default: when yours does)",
              })
              .conflicts("project", "all-projects"),
          (args) =>
            ctx.run(args, async ({ client, json, io }) => {
              const body: ApiKeyCreate = {};
              if (args.name !== undefined) body.name = args.name;
              if (args.scope) body.scopes = args.scope as ApiKeyCreate["scopes"];
              if (args.allProjects) body.project_ids = null;
              else if (args.project) body.project_ids = args.project;
              if (args.expiresAt === "never") body.expires_at = null;
              else if (args.expiresAt !== undefined) {
                if (Number.isNaN(Date.parse(args.expiresAt)))
                  throw new UsageError(`--expires-at ${args.expiresAt} is not a time (RFC 3339) nor "never"`);
                body.expires_at = new Date(args.expiresAt).toISOString();
              }
              const created = unwrapData(await client.POST("/v1/api-keys", { body }));
              if (json) return printJson(io, created);
              io.stdout.write(keyFields(created));
              io.stdout.write(`\n${created.key}\n`);
              io.stderr.write("This is the only time the key is shown: store it now.\n");
            }),
        )
        .command<GlobalArgs & ListArgs & { account?: string }>(
          "list",
          "List keys: yours, or (org owner/admin) every key of the organization",
          (y) =>
            listOptions(y).option("account", { type: "string", describe: "Only the keys of this account" }),
          (args) =>
            ctx.run(args, async ({ client, json, io }) => {
              const list = await collect<ApiKeyRecord>(args, (after, limit) =>
                client.GET("/v1/api-keys", { params: { query: { after, limit, account_id: args.account } } }),
              );
              if (json) return printJson(io, list);
              io.stdout.write(
                table(
                  ["ID", "NAME", "ACCOUNT", "PARENT", "SCOPES", "EXPIRES", "REVOKED", "LAST USED"],
                  list.data.map((k) => [
                    k.id,
                    k.name,
                    k.account_id,
                    k.parent_id,
                    k.scopes.join(","),
                    k.expires_at,
                    k.revoked_at,
                    k.last_used_at,
                  ]),
                ),
              );
              if (list.next_page) io.stderr.write(`more: --after ${list.next_page} (or --all)\n`);
            }),
        )
        .command<GlobalArgs & { id: string }>(
          ["get <id>", "show"],
          "Show a key you may see: its scopes, projects, expiry, last use and revocation (never the key)",
          keyId,
          (args) =>
            ctx.run(args, async ({ client, json, io }) => {
              const key = unwrapData(
                await client.GET("/v1/api-keys/{id}", { params: { path: { id: args.id } } }),
              );
              if (json) return printJson(io, key);
              io.stdout.write(
                keyFields(key, [
                  ["last used", key.last_used_at ?? "never"],
                  ["revoked", key.revoked_at ?? "no"],
                  ["created", key.created_at],
                ]),
              );
            }),
        )
        .command<GlobalArgs & { id: string }>(
          "revoke <id>",
          "Revoke a key and every key made from it",
          keyId,
          (args) =>
            ctx.run(args, async ({ client, json, io }) => {
              unwrap(await client.DELETE("/v1/api-keys/{id}", { params: { path: { id: args.id } } }));
              if (json) return printJson(io, { id: args.id, revoked: true });
              io.stdout.write(`revoked ${args.id} and every key made from it\n`);
            }),
        ),
  );
}

const keyId = <T>(y: Argv<T>) =>
  y.positional("id", { type: "string", demandOption: true, describe: "The key's ID" });

type KeyCreateArgs = {
  name?: string;
  scope?: string[];
  project?: string[];
  allProjects?: boolean;
  expiresAt?: string;
};

function keyFields(k: ApiKeyRecord, more: Array<[string, unknown]> = []): string {
  return fields([
    ["id", k.id],
    ["name", k.name],
    ["account", k.account_id],
    ["parent", k.parent_id],
    ["scopes", k.scopes],
    ["projects", k.project_ids ?? "all"],
    ["expires", k.expires_at ?? "never"],
    ...more,
  ]);
}
