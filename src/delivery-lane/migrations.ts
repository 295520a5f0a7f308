/**
 * The storage of a delivery lane (./object.ts), one numbered step after another, applied by
 * src/lib/do-migrations.ts. Append-only: a deployed step is never edited, a change is the next
 * number (an added column is `ALTER TABLE lane ADD COLUMN …` as a new version).
 *
 * Version 1 is the schema lanes had before this list existed, and what brought an older lane up
 * to it: a lane created before `bookmark` and `database` were added kept its table (CREATE TABLE IF
 * NOT EXISTS leaves it as it is), so the columns it lacks are added, nullable, and its entries read
 * the primary of the directory's database as they did. On a lane that has them all, it changes
 * nothing.
 */
import type { Migration } from "../lib/do-migrations";

/** Columns added to `lane` after it first shipped, each with the statement that adds it. */
const ADDED_BEFORE_V1: ReadonlyArray<[name: string, statement: string]> = [
  ["bookmark", "ALTER TABLE lane ADD COLUMN bookmark TEXT"],
  ["database", "ALTER TABLE lane ADD COLUMN database TEXT"],
];

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    apply(sql) {
      sql.exec(`CREATE TABLE IF NOT EXISTS lane (
     delivery_id TEXT PRIMARY KEY,
     series INTEGER NOT NULL,
     manual INTEGER NOT NULL,
     tries INTEGER NOT NULL,
     due_at INTEGER NOT NULL,
     bookmark TEXT,
     database TEXT
   )`);
      sql.exec("CREATE INDEX IF NOT EXISTS lane_due_at ON lane (due_at)");
      const columns = new Set(
        sql
          .exec<{ name: string }>("PRAGMA table_info(lane)")
          .toArray()
          .map((c) => c.name),
      );
      for (const [name, statement] of ADDED_BEFORE_V1) if (!columns.has(name)) sql.exec(statement);
    },
  },
];
