/**
 * A live stream's second look at its caller (API_CONTRACT §5's 60 s, §19), for ./follow.ts: before
 * it sends, at most every `streamRecheckMs` (30 s), the stream checks again that its key still
 * authenticates as the same key (the caller's `recheckAccess`: the stream never holds the key) and
 * may still read the deployment (a revoked key, a membership removed, the deployment deleted). A
 * change of the deployment also starts a timer for that check, so a stream whose client stopped
 * reading ends all the same; an idle deployment starts none (a check is a D1 query, and an idle
 * stream costs none).
 */
import type { CallerContext } from "../../context";
import type { Db } from "../../db/client";
import { deployments } from "../../db/schema";
import { ApiError, loggableError } from "../../errors";
import { loadAuthorized } from "../access";

export class StreamAccess {
  /** When the key and access were last checked (the stream's opening checked them). */
  private checkedAt = Date.now();
  private checking: Promise<boolean> | null = null;
  /** A change was pushed since the last check; `timer` is set to check it. */
  private unchecked = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;

  /**
   * `db` is the stream's current session (as fresh as what it reads); `denied` ends the stream,
   * called when a change's timer finds the caller no longer allowed.
   */
  constructor(
    private readonly ctx: CallerContext,
    private readonly deploymentId: string,
    private readonly db: () => Db,
    private readonly denied: () => void,
  ) {}

  /** Whether the stream may send: checked again once `streamRecheckMs` has passed since the last check. */
  async mayStillSend(): Promise<boolean> {
    if (Date.now() - this.checkedAt < this.ctx.config.streamRecheckMs) return true;
    return this.check();
  }

  /**
   * A change was pushed: check the key and access within `streamRecheckMs` of the last check,
   * whether or not the client takes what the change brought.
   */
  noteChange(): void {
    this.unchecked = true;
    if (this.timer !== undefined || this.stopped) return;
    const delay = Math.max(0, this.checkedAt + this.ctx.config.streamRecheckMs - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.recheckChange();
    }, delay);
  }

  /** The stream ended: no timer outlives it. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** One check at a time: the timer's and a send's share it. */
  private check(): Promise<boolean> {
    this.checking ??= (async () => {
      this.checkedAt = Date.now();
      this.unchecked = false;
      try {
        return await this.stillAllowed();
      } finally {
        this.checking = null;
      }
    })();
    return this.checking;
  }

  private async recheckChange(): Promise<void> {
    if (this.stopped || !this.unchecked) return;
    try {
      if (!(await this.check())) this.denied();
    } catch (err) {
      // D1 unreachable says nothing of the key: the next send or change checks again.
      this.ctx.log.warn("could not check a stream's access again", {
        deployment_id: this.deploymentId,
        error: loggableError(err),
      });
    }
  }

  /**
   * Whether the key still authenticates as the same key and may still read the deployment. The
   * key's lookup comes from the isolate's cache when it has one; the access check is one read.
   */
  private async stillAllowed(): Promise<boolean> {
    try {
      const identity = await this.ctx.recheckAccess();
      if (!identity) return false;
      await loadAuthorized(this.db(), identity, deployments, this.deploymentId, "read", "Deployment");
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.status < 500) return false;
      throw err;
    }
  }
}
