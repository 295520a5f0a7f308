/**
 * Where the internal API last found an id it was asked for (src/middleware/internal-database.ts):
 * the database that holds it, kept in the isolate for LOCATION_TTL_MS, at most
 * LOCATION_MAX_ENTRIES. Forgotten all at once when a write meets a move's fence, and when a move
 * this isolate runs switches (src/services/moves/switch.ts); other isolates' answers lapse before
 * the move removes what it moved (its settle time is longer than the TTL).
 */
import { setBounded } from "../lib/bounded-map";

const found = new Map<string, { database: string; until: number }>();
const LOCATION_MAX_ENTRIES = 10_000;
export const LOCATION_TTL_MS = 30_000;

export function knownLocation(key: string, now: number): string | undefined {
  const known = found.get(key);
  return known && known.until > now ? known.database : undefined;
}

export function rememberLocation(key: string, database: string, now: number): void {
  setBounded(found, key, { database, until: now + LOCATION_TTL_MS }, LOCATION_MAX_ENTRIES);
}

export function forgetLocations(): void {
  found.clear();
}
