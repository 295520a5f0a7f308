import { DurableObject } from "cloudflare:workers";
import {
  type ClaimOutcome,
  claimKey,
  countKeys,
  expireKeys,
  type IdempotencyClaim,
  type Settlement,
  settleKey,
} from "../idempotency/store";
import { migrate } from "../lib/do-migrations";
import { pruneBookmark, readBookmark, storeBookmark } from "./bookmark";
import { claimJti, countJtis, pruneJtis, releaseJti } from "./jti";
import { type KeyUses, pruneKeyUses, readKeyUses, recordUse, writeDueUses } from "./key-use";
import { BASELINE, MIGRATIONS } from "./migrations";
import {
  countLeases,
  openLease,
  pruneLeases,
  releaseLease,
  renewLease,
  type StreamAdmission,
  type StreamLeaseRequest,
  streamRoom,
} from "./stream-leases";
import {
  countHit,
  pruneWindows,
  type StoredWindows,
  type WindowDecision,
  windowState,
  windowUsage,
} from "./window";

/**
 * What a request asks of its limiter object in `admit`: one call per authenticated request.
 * Each feature adds its own optional field here and in `AdmitResult`, so the request still
 * costs one call whatever it carries.
 */
export type AdmitRequest = {
  /** The rate-limit policy the request counts against, its limit and window. */
  policy: string;
  limit: number;
  windowSeconds: number;
  /** API_CONTRACT §11: claim this Idempotency-Key, only if the request is admitted. */
  idempotency?: IdempotencyClaim;
  /** The API key this request authenticated with, and its database: its `last_used_at` (./key-use.ts). */
  usedKey?: { id: string; database: string };
  /** API_CONTRACT §33: a live stream, admitted only with a place among the family's (./stream-leases.ts). */
  stream?: StreamLeaseRequest;
};

/** What `admit` answers: each feature adds its own field. */
export type AdmitResult = {
  decision: WindowDecision;
  /** The latest D1 bookmark of this key's writes (src/rate-limit/bookmark.ts), if one is kept. */
  bookmark?: string;
  /** Present when the request asked for a claim and was admitted. */
  idempotency?: ClaimOutcome;
  /** The request is to write its key's `last_used_at` itself (./key-use.ts). */
  writeUse?: true;
  /** Present when the request asked for a stream's place: refused, the request was not counted. */
  stream?: StreamAdmission;
};

/** Settles a claimed key: stores the answer, releases the key (`null`) or lets it lapse. */
export type SettleRequest = { idempotency: IdempotencyClaim; answer: Settlement };

/**
 * One object per key family (`key:<id of the key at its top>`, API_CONTRACT §28), one per
 * OpenID Connect trust for the keys it issued and their families (`trust:<trust id>`, §27), and one
 * per client IP for failed authentications and token exchanges (`ip:<ip>`): no object or counter
 * is shared by all traffic, so the limiter's load spreads over
 * the active keys and grows with them (docs/capacity.md). An object is created near the Worker
 * that first calls it, which is where its key is used; no location hint could do better.
 *
 * The object answers each request in one synchronous step (SQL on its own storage never awaits),
 * so concurrent calls are serialized and can never over-admit:
 * - an exact sliding window per policy (./window.ts), its rows kept in memory as stored, so
 *   deciding costs no read and an admitted request is one INSERT;
 * - the latest D1 bookmark of the family's writes (./bookmark.ts), handed back with the decision so
 *   that a read starts its D1 session from it at no extra call;
 * - the request's Idempotency-Key claim (src/idempotency/store.ts), made in the same step as the
 *   decision, so "exactly one execution" is a property of this one call;
 * - when each key of it was last used (./key-use.ts): one write to D1 per key every few minutes, by the
 *   first request after a quiet spell or by the alarm;
 * - the family's live streams (./stream-leases.ts): a stream is admitted in the same step as its
 *   window, only with a place among the family's 10, and holds it by a lease it renews.
 *
 * Storage stays bounded: `admit` prunes its policy's entries that left the window, and an alarm
 * (one window after the newest entry, the bookmark's retention, or the oldest idempotency entry's
 * expiry) deletes what is left, so the object of a key gone quiet ends with no storage at all.
 *
 * A trust's object also keeps the `jti` of every token exchanged under it until the token expires
 * (./jti.ts), so a token is exchanged at most once, whichever isolate it reaches.
 *
 * This file only wires the object's calls to those six modules, each of which runs every
 * statement on its job's tables; the tables themselves are one numbered list, ./migrations.ts.
 */
export class RateLimiter extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  /** Whether this object's storage has had its migrations (./migrations.ts) in this lifetime. */
  private migrated = false;
  /** When the pending clean-up alarm fires (ms), or null when none is set. */
  private alarmAt: number | null = null;
  /** The sliding window's rows as stored, per policy (./window.ts). */
  private readonly windows: StoredWindows = new Map();
  /** The kept D1 bookmark as stored (null: none); undefined until first read (./bookmark.ts). */
  private bookmark: string | null | undefined;
  /** Its keys' uses as stored, with the latest use seen; undefined until first read (./key-use.ts). */
  private uses: KeyUses | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    ctx.blockConcurrencyWhile(async () => {
      this.alarmAt = await ctx.storage.getAlarm();
    });
  }

  /**
   * Counts one request against its policy and hands back the key's latest write bookmark; when
   * admitted, also claims its Idempotency-Key: one call, one step.
   */
  admit(request: AdmitRequest): AdmitResult {
    if (request.stream) {
      this.ensureMigrated();
      const room = streamRoom(this.sql, request.stream, Date.now());
      if (!room.admitted) {
        // No place: refused before the window, which it does not count (§7).
        const { policy, limit, windowSeconds } = request;
        return { decision: windowState(this.sql, this.windows, policy, limit, windowSeconds), stream: room };
      }
    }
    const decision = this.hit(request.policy, request.limit, request.windowSeconds);
    const result: AdmitResult = { decision };
    if (request.stream && decision.allowed) {
      this.cleanUpBy(openLease(this.sql, request.stream, Date.now()));
      result.stream = { admitted: true };
    }
    if (request.usedKey !== undefined && this.recordUse(request.usedKey.id, request.usedKey.database)) {
      result.writeUse = true;
    }
    if (this.bookmark === undefined) this.bookmark = readBookmark(this.sql) ?? null;
    if (this.bookmark !== null) result.bookmark = this.bookmark;
    if (!request.idempotency || !decision.allowed) return result;
    const { expiresAt, ...claim } = claimKey(this.sql, request.idempotency, Date.now());
    if (expiresAt !== undefined) this.cleanUpBy(expiresAt);
    result.idempotency = claim;
    return result;
  }

  /** The second call of a request that claimed a key: stores its answer or releases the key. */
  settle(request: SettleRequest): void {
    this.ensureMigrated();
    // One transaction: an entry is `done` only with all of its answer's parts.
    this.ctx.storage.transactionSync(() => settleKey(this.sql, request.idempotency, request.answer));
  }

  /**
   * Keeps `bookmark` (a D1 bookmark taken after one of the key's writes) if it is later than
   * the stored one; returns the one now stored, the latest of the key's writes.
   */
  recordBookmark(bookmark: string): string {
    this.ensureMigrated();
    const now = Date.now();
    const latest = storeBookmark(this.sql, bookmark, now);
    this.bookmark = latest;
    if (this.alarmAt === null) this.scheduleCleanup(pruneBookmark(this.sql, now) ?? now);
    return latest;
  }

  /**
   * A trust's object (API_CONTRACT §27): claims an ID token's `jti` (a digest) until the token
   * expires (`until`, ms); false when it was already exchanged (./jti.ts).
   */
  claimJti(request: { jti: string; until: number }): boolean {
    this.ensureMigrated();
    const claimed = claimJti(this.sql, request.jti, request.until, Date.now());
    if (claimed) this.cleanUpBy(request.until);
    return claimed;
  }

  /** A live stream renews its lease; false once its place is gone (./stream-leases.ts). */
  renewStream(request: StreamLeaseRequest): boolean {
    this.ensureMigrated();
    const until = renewLease(this.sql, request, Date.now());
    if (until !== null) this.cleanUpBy(until);
    return until !== null;
  }

  /** A live stream ended: its place is free at once. */
  releaseStream(id: string): void {
    this.ensureMigrated();
    releaseLease(this.sql, id);
  }

  /** The family's live streams now (for tests and diagnostics). */
  streamLeases(): number {
    this.ensureMigrated();
    return countLeases(this.sql, Date.now());
  }

  /**
   * Gives back a `jti` claimed by an exchange that then made no key for a reason of the
   * organization's, not the token's (its `api_keys` limit, API_CONTRACT §29): the token was not
   * exchanged, so it may be once there is room.
   */
  releaseJti(request: { jti: string }): void {
    this.ensureMigrated();
    releaseJti(this.sql, request.jti);
  }

  /** The sliding window alone (synchronous, so its tests can drive it directly). */
  hit(policy: string, limit: number, windowSeconds: number): WindowDecision {
    this.ensureMigrated();
    const { decision, until } = countHit(this.sql, this.windows, policy, limit, windowSeconds);
    // Earlier than a pending alarm set for an idempotency entry's expiry, too.
    if (until !== null) this.cleanUpBy(until);
    return decision;
  }

  /** Records a use of the key; true when the request is to write it (the first in a while). */
  private recordUse(keyId: string, database: string): boolean {
    this.uses ??= readKeyUses(this.sql);
    const { writeNow, dueAt } = recordUse(this.sql, this.uses, keyId, database, Date.now());
    // A written use's row is pruned by the window's alarm, which every admitted request sets.
    if (dueAt !== null) this.cleanUpBy(dueAt);
    return writeNow;
  }

  /**
   * Writes the keys' last uses when due; deletes every window entry that left its window, every
   * expired idempotency entry and every exchanged `jti` whose token expired; with nothing left,
   * all of the object's storage. Next run: when the window is empty again, when the oldest
   * idempotency entry expires, when a key's use is due, or when the next `jti` expires, whichever
   * comes first.
   */
  override async alarm(): Promise<void> {
    this.alarmAt = null;
    this.ensureMigrated();
    this.uses ??= readKeyUses(this.sql);
    await writeDueUses(this.env, this.sql, this.uses, Date.now());
    // What follows deletes rows of every policy and the bookmark: read them again when next used.
    this.forgetCachedState();
    const now = Date.now();
    // Each use is kept in memory with its latest time; forgotten only with its row.
    const useNext = pruneKeyUses(this.sql, this.uses, now);
    const windowUntil = pruneWindows(this.sql, now);
    const bookmarkUntil = pruneBookmark(this.sql, now);
    const nextExpiry = expireKeys(this.sql, now);
    const jtiNext = pruneJtis(this.sql, now);
    const leasesUntil = pruneLeases(this.sql, now);
    // The window, the bookmark and the leases: when the last of them ends; idempotency entries:
    // when the first expires (each alarm run deletes those due and schedules the next).
    const lasting = Math.max(windowUntil ?? 0, bookmarkUntil ?? 0, leasesUntil ?? 0);
    const next = [lasting === 0 ? null : lasting, nextExpiry, useNext, jtiNext].filter(
      (at): at is number => at !== null,
    );
    if (next.length === 0) {
      await this.ctx.storage.deleteAll();
      this.migrated = false;
      this.forgetCachedState();
      this.uses = undefined;
      return;
    }
    this.scheduleCleanup(Math.min(...next));
  }

  /** Admitted requests currently stored for each policy (for tests and diagnostics). */
  usage(): Record<string, number> {
    this.ensureMigrated();
    return windowUsage(this.sql);
  }

  /** Exchanged `jti` claims currently stored (for tests and diagnostics). */
  jtiEntries(): number {
    this.ensureMigrated();
    return countJtis(this.sql);
  }

  /** Idempotency entries currently stored (for tests and diagnostics). */
  idempotencyEntries(): number {
    this.ensureMigrated();
    return countKeys(this.sql);
  }

  /** Makes sure the clean-up alarm runs by `at`: sets it unless one is set for no later. */
  private cleanUpBy(at: number) {
    if (this.alarmAt === null || this.alarmAt > at) this.scheduleCleanup(at);
  }

  private scheduleCleanup(at: number) {
    this.alarmAt = at;
    // Not awaited: like the SQL writes, the alarm write commits before the reply leaves.
    void this.ctx.storage.setAlarm(at);
  }

  private forgetCachedState() {
    this.windows.clear();
    this.bookmark = undefined;
  }

  /**
   * The object's tables (./migrations.ts), made on its first use rather than at its start: an
   * object that deleted all of its storage (the alarm, above) keeps none until it is used again.
   */
  private ensureMigrated() {
    if (this.migrated) return;
    migrate(this.ctx.storage, MIGRATIONS, BASELINE);
    this.migrated = true;
  }
}
