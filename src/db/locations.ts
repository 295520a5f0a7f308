/**
 * Where the internal API last found an id it was asked for (src/middleware/internal-database.ts):
 * the database that holds it, kept in the isolate for LOCATION_TTL_MS, at most
 * LOCATION_MAX_ENTRIES. Forgotten all at once when a write meets a move's fence, and when a move
 * this isolate runs switches (src/services/moves/switch.ts); other isolates' answers lapse before
 * the move removes what it moved (its settle time is longer than the TTL). A lookup that a forget
 * overtook (it read before the switch) is not remembered: it would name the database just left,
 * for a TTL, in the isolate that knows better (and where the settle time is short, locally, past
 * the removal of the organization's rows there, whose writes would then land where no one reads).
 */
import { setBounded } from "../lib/bounded-map";

const found = new Map<string, { database: string; until: number }>();
let forgets = 0;
const LOCATION_MAX_ENTRIES = 10_000;
export const LOCATION_TTL_MS = 30_000;

export function knownLocation(key: string, now: number): string | undefined {
  const known = found.get(key);
  return known && known.until > now ? known.database : undefined;
}

/** The mark a lookup takes when it begins, for `rememberLocation`. */
export function locationsMark(): number {
  return forgets;
}

/** Remembers where `key` was found, unless the locations were forgotten since `mark`. */
export function rememberLocation(key: string, database: string, now: number, mark: number): void {
  if (mark !== forgets) return;
  setBounded(found, key, { database, until: now + LOCATION_TTL_MS }, LOCATION_MAX_ENTRIES);
}

export function forgetLocations(): void {
  forgets++;
  found.clear();
}
