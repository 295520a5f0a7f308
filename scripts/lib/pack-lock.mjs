// One `npm pack -w clients/typescript` at a time: its `prepack` rebuilds clients/typescript/dist
// from scratch, and `npm test` runs check:cli and check:dev (whose README walk packs too) side by
// side. A directory is the lock (mkdir is atomic); one older than three minutes is a crashed
// holder's and is taken over.
import { mkdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const PACK_LOCK = join(tmpdir(), "deploy-platform-client-pack.lock");
const STALE_MS = 180_000;

/** Runs `fn` holding the lock. */
export async function withPackLock(fn) {
  for (;;) {
    try {
      mkdirSync(PACK_LOCK);
      break;
    } catch (err) {
      if (err.code !== "EEXIST") throw err;
      try {
        if (Date.now() - statSync(PACK_LOCK).mtimeMs > STALE_MS)
          rmSync(PACK_LOCK, { recursive: true, force: true });
      } catch {}
      await new Promise((r) => setTimeout(r, 300));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(PACK_LOCK, { recursive: true, force: true });
  }
}
