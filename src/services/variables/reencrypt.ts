/**
 * The internal API's `internalReencryptVariables`, the rotation sweep: moves up to `limit` values
 * still under VARIABLES_KEY_PREVIOUS onto VARIABLES_KEY, in one batch: the variables' values
 * first, then the values a scope's history keeps for restores (./history.ts), each opened and
 * sealed again with the identity it was sealed for. Rows under any other key are not its
 * business (they fail on reveal, loudly). A value replaced concurrently keeps the newer write:
 * each update applies only while the stored envelope is still the one that was read.
 * `updated_at` is left alone: the variable did not change, only how it is kept. Integrations'
 * signing secrets, sealed under the same key (src/crypto/signing-secrets.ts), move first, and any
 * still stored in clear are sealed whether or not a rotation is under way. An operator loops
 * until `remaining` is false, then drops VARIABLES_KEY_PREVIOUS.
 */
import { and, asc, eq, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { inDatabase, type ServiceContext } from "../../context";
import {
  decryptVariableValue,
  encryptVariableValue,
  type VariableIdentity,
  variableKeyVersion,
} from "../../crypto/variables";
import { notFenced, projectOrg } from "../../db/moving";
import { variableVersionValues as history, variables } from "../../db/schema";
import { auditEntry } from "../audit/entry";
import { resealSigningSecrets, staleSigningSecrets } from "../integrations/secrets";
import { cryptoFailure, withoutParameters } from "./values";

type Sealed = { envelope: string; keyVersion: number };

type ReencryptResult = {
  key_version: number;
  previous_key_version: number | null;
  reencrypted: number;
  remaining: boolean;
};

/**
 * `POST /internal/v1/variables/reencrypt`: up to `limit` values in each organization database
 * (src/db/databases.ts), all at once; `remaining` while any has more.
 */
export async function reencryptEverywhere(ctx: ServiceContext, limit = 100): Promise<ReencryptResult> {
  const results = await Promise.all(
    ctx.config.orgDatabases.map((database) => reencryptVariables(inDatabase(ctx, database), limit)),
  );
  const [first] = results;
  if (!first) throw new Error("no organization database");
  return {
    ...first,
    reencrypted: results.reduce((sum, r) => sum + r.reencrypted, 0),
    remaining: results.some((r) => r.remaining),
  };
}

export async function reencryptVariables(ctx: ServiceContext, limit = 100): Promise<ReencryptResult> {
  const { db } = ctx;
  const secrets = ctx.config.variableKeys;
  let current: number;
  let previous: number | null = null;
  try {
    current = await variableKeyVersion(secrets.current);
    if (secrets.previous !== undefined && secrets.previous.trim() !== "") {
      previous = await variableKeyVersion(secrets.previous, "VARIABLES_KEY_PREVIOUS");
    }
  } catch (err) {
    return cryptoFailure(ctx.log, err, "reencrypt", "-");
  }
  const rotating = previous !== null && previous !== current;
  // Integrations' signing secrets first (one row each, and each delivery opens one): those under
  // the previous key, and any still stored in clear, which are sealed with no rotation under way.
  const signing = await resealSigningSecrets(ctx, rotating ? previous : null, limit);
  const room = limit - signing.updates.length;
  let live: VariableRow[] = [];
  let old: HistoryRow[] = [];
  let remaining = signing.remaining;
  if (rotating && room === 0) remaining = true;
  else if (rotating) {
    const rows = await db
      .select({
        id: variables.id,
        environmentId: variables.environmentId,
        scope: variables.scope,
        value: variables.value,
        keyVersion: variables.keyVersion,
      })
      .from(variables)
      .where(
        and(eq(variables.keyVersion, previous as number), notFenced(projectOrg(sql`${variables.projectId}`))),
      )
      .orderBy(variables.id)
      .limit(room + 1)
      .all();
    live = rows.slice(0, room);
    // What room the variables leave goes to the history's values, one more to see if any remain.
    const left = room - live.length;
    const kept =
      rows.length > room
        ? []
        : await db
            .select()
            .from(history)
            .where(
              and(
                eq(history.keyVersion, previous as number),
                notFenced(projectOrg(sql`${history.projectId}`)),
              ),
            )
            .orderBy(asc(history.environmentId), asc(history.scope), asc(history.name), asc(history.version))
            .limit(left + 1)
            .all();
    old = kept.slice(0, left);
    remaining ||= rows.length > room || kept.length > left;
  }
  remaining ||= await fencedLeft(ctx, rotating ? previous : null);

  const reseal = async (identity: VariableIdentity, stored: { value: string; keyVersion: number | null }) => {
    try {
      const plaintext = await decryptVariableValue(secrets, identity, {
        envelope: stored.value,
        keyVersion: stored.keyVersion,
      });
      return await encryptVariableValue(secrets, identity, plaintext);
    } catch (err) {
      return cryptoFailure(ctx.log, err, "reencrypt", identity.id);
    }
  };
  const set = (sealed: Sealed) => ({ value: sealed.envelope, keyVersion: sealed.keyVersion });
  const updates: BatchItem<"sqlite">[] = [...signing.updates];
  for (const row of live) {
    const sealed = await reseal({ id: row.id, environmentId: row.environmentId, scope: row.scope }, row);
    updates.push(
      db
        .update(variables)
        .set(set(sealed))
        .where(and(eq(variables.id, row.id), eq(variables.value, row.value))),
    );
  }
  for (const row of old) {
    const identity = { id: row.sealedFor ?? "", environmentId: row.environmentId, scope: row.scope };
    const sealed = await reseal(identity, { value: row.value ?? "", keyVersion: row.keyVersion });
    const same: SQL[] = [
      eq(history.environmentId, row.environmentId),
      eq(history.scope, row.scope),
      eq(history.name, row.name),
      eq(history.version, row.version),
      eq(history.value, row.value ?? ""),
    ];
    updates.push(
      db
        .update(history)
        .set(set(sealed))
        .where(and(...same)),
    );
  }
  const [first, ...rest] = updates;
  if (first) {
    try {
      // One entry for the sweep, across organizations (org_id null): which values moved to
      // which key. A variable's update applies unless the value was replaced meanwhile, which
      // changes the variable anyway; a history value is never replaced; an integration's unless
      // its secrets changed meanwhile (a rotation, which seals its own).
      const audit = auditEntry(ctx, {
        orgId: null,
        target: { type: "variables_key", id: String(current) },
        changes: {
          key_version: { from: previous, to: current },
          variable_ids: { from: null, to: live.map((r) => r.id) },
          history_values: { from: null, to: old.length },
          integration_ids: { from: null, to: signing.ids },
        },
        when: "always",
      });
      await db.batch([first, ...rest, audit]);
    } catch (err) {
      throw withoutParameters(err);
    }
  }
  return {
    key_version: current,
    previous_key_version: previous,
    reencrypted: updates.length,
    remaining,
  };
}

/**
 * Whether an organization fenced here (a move's switch: src/db/moving.ts) holds values under
 * `previous` or signing secrets to seal. The passes leave its rows alone, since none of them can be
 * written and one would fail the whole batch, so that every other organization's go on; they are
 * still to do: a refused switch lifts the fence and leaves them here, and a completed move removes
 * them (it re-encrypts nothing: its copies, where it went, are that database's to seal).
 */
async function fencedLeft(ctx: ServiceContext, previous: number | null): Promise<boolean> {
  const underPrevious =
    previous === null
      ? sql`0`
      : sql`EXISTS (SELECT 1 FROM ${variables} WHERE ${variables.projectId} = p.id AND ${variables.keyVersion} = ${previous}) OR EXISTS (SELECT 1 FROM ${history} WHERE ${history.projectId} = p.id AND ${history.keyVersion} = ${previous})`;
  const row = await ctx.db.get<{ left: number }>(
    sql`SELECT EXISTS (SELECT 1 FROM moving_orgs m JOIN projects p ON p.org_id = m.org_id WHERE m.fenced = 1 AND (${underPrevious} OR EXISTS (SELECT 1 FROM notification_integrations WHERE notification_integrations.project_id = p.id AND ${staleSigningSecrets(previous)}))) AS "left"`,
  );
  return row?.left === 1;
}

type VariableRow = {
  id: string;
  environmentId: string;
  scope: (typeof variables.$inferSelect)["scope"];
  value: string;
  keyVersion: number | null;
};
type HistoryRow = typeof history.$inferSelect;
