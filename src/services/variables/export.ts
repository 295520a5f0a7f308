/**
 * `export{Environment|Component}Variables` (API_CONTRACT §18): a scope as a dotenv file, read a
 * page at a time from its history at one version (the operations that change a whole scope:
 * ./sets.ts).
 */
import { sql } from "drizzle-orm";
import type { CallerContext } from "../../context";
import { bindQuery } from "../../db/compiled";
import { variables } from "../../db/schema";
import { loggableError } from "../../errors";
import { formatDotenv } from "../../lib/dotenv";
import { inGroups } from "../../lib/groups";
import { auditEntry } from "../audit/entry";
import { lookupThen } from "../lookup";
import { currentVersionQuery, namedValuesAtSelect, type ValueRow } from "./history";
import { inVariableSet, parentLookup, type VariableParent, variableSetTarget } from "./parent";
import { openValue } from "./values";

/** At most this many bytes of stored values are read, opened and written out at once by an export. */
export const EXPORT_PAGE_BYTES = 1024 * 1024;
/** At most this many names a page of an export reads (one bound list). */
const EXPORT_PAGE_NAMES = 500;

/**
 * The `exportEnvironmentVariables` and `exportComponentVariables` operations: the scope as a
 * dotenv file, every type included. A reveal: its audit entry (the names) is written before any
 * value is opened, and a reveal that cannot be recorded does not happen.
 *
 * The file is the scope exactly as it was at one version, whatever its size and whatever changes
 * while it is sent. One round trip reads, with the lookup that authorizes it, the scope's names,
 * the stored size of each value and its current version; the values are then read from the
 * history at that version (./history.ts `namedValuesAtSelect`), a page of names at a time, at most
 * EXPORT_PAGE_BYTES of stored values each. A scope of one page answers as a whole text; a larger
 * one is a stream that reads, opens and writes each page as the client takes the one before, so an
 * export's memory is a page's, not the scope's (a scope may hold 20,000 values of 64 KiB). A page
 * that does not find every name it asks for (the organization's rows removed from this database by
 * a move meanwhile) ends the stream with an error instead of a file with names missing.
 */
export async function exportVariables(
  ctx: CallerContext,
  parent: VariableParent,
): Promise<string | ReadableStream<Uint8Array>> {
  const { db } = ctx;
  const sizes = bindQuery(
    db,
    db
      .select({ name: variables.name, bytes: sql<number>`length(CAST(${variables.value} AS BLOB))` })
      .from(variables)
      .where(inVariableSet(variables, parent)),
  );
  const {
    found: scope,
    results: [rows, version],
  } = await lookupThen(
    db,
    parentLookup(db, ctx.identity, parent, "write"),
    sizes,
    currentVersionQuery(db, parent),
  );
  const named = rows
    .map(([name, bytes]) => ({ name: String(name), bytes: Number(bytes) }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const audit = auditEntry(ctx, {
    target: variableSetTarget(parent),
    projectId: scope.projectId,
    changes: { names: { from: null, to: named.map((n) => n.name) } },
    when: "always",
  });
  const at = Number(version[0]?.[0] ?? 0);
  // Pages of at most EXPORT_PAGE_BYTES of stored values (a larger value alone) and EXPORT_PAGE_NAMES names.
  const pages = inGroups(named, (n) => n.bytes, EXPORT_PAGE_BYTES, EXPORT_PAGE_NAMES).map((page) =>
    page.map((n) => n.name),
  );
  const opened = async (names: string[], found: ValueRow[]): Promise<string> => {
    if (found.length !== names.length) {
      throw new Error(`variables export: ${names.length - found.length} names not found at version ${at}`);
    }
    const entries = await Promise.all(
      found.map(async (row, i) => {
        const { name, type, value } = row;
        if (name !== names[i] || type === null || value === null) {
          throw new Error(`variables export: ${names[i]} not found at version ${at}`);
        }
        // Opened with the identity it was sealed for, as a restore opens it.
        const identity = { id: row.sealedFor ?? "", environmentId: scope.environmentId, scope: scope.scope };
        return {
          name,
          value: await openValue(ctx, identity, { type, value, keyVersion: row.keyVersion }, "export"),
        };
      }),
    );
    return formatDotenv(entries);
  };
  const page = async (names: string[]) => opened(names, await namedValuesAtSelect(db, scope, at, names));
  const [first, ...rest] = pages;
  if (!first) {
    await audit.run();
    return "";
  }
  // The first page is read with the audit entry, in its batch: no value is opened unless it is recorded.
  const [, found] = await db.batch([audit, namedValuesAtSelect(db, scope, at, first)]);
  const head = await opened(first, found);
  if (rest.length === 0) return head;
  const encoder = new TextEncoder();
  let next = 0;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        controller.enqueue(encoder.encode(head));
      },
      async pull(controller) {
        const names = rest[next++];
        if (!names) return controller.close();
        try {
          controller.enqueue(encoder.encode(await page(names)));
        } catch (err) {
          ctx.log.error("variables export failed while sending", { error: loggableError(err) });
          controller.error(err);
        }
      },
    },
    { highWaterMark: 0 },
  );
}
