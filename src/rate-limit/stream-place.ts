/**
 * A live stream's place among its key family's (API_CONTRACT §33), as the Worker that serves the
 * stream holds it: the lease its limiter object granted with the request's admission
 * (./stream-leases.ts, ./limiter.ts `admit`), renewed while the stream lasts (`renew`, from the
 * stream's heartbeat: src/routes/deployments/getDeploymentTimeline.ts) and given back once, when
 * the stream ends or when the request never became a stream (a `404`, a `400`: the rate-limit
 * middleware's, src/middleware/rate-limit.ts).
 *
 * Failing open, as the rate limit does: a renewal the limiter cannot answer is logged and tried
 * again at the next beat (the lease outlasts three missed ones); a release it cannot answer leaves
 * the lease to lapse.
 */
import { loggableError } from "../errors";
import type { Logger } from "../lib/log";
import type { StreamLeaseRequest } from "./stream-leases";

/** What of the family's limiter object the place uses. */
export type StreamLimiter = {
  renewStream(request: StreamLeaseRequest): Promise<boolean>;
  releaseStream(id: string): Promise<void>;
};

export class StreamPlace {
  /** A stream took the place: it renews it and gives it back when it ends. */
  private held = false;
  private released = false;

  constructor(
    private readonly limiter: StreamLimiter,
    private readonly lease: StreamLeaseRequest,
    private readonly log: Logger,
    private readonly waitUntil: (work: Promise<unknown>) => void,
  ) {}

  /** How often the stream renews its lease: four times a lease. */
  get renewEveryMs(): number {
    return this.lease.leaseMs / 4;
  }

  /** The stream is open and holds the place from now on. */
  hold(): void {
    this.held = true;
  }

  get isHeld(): boolean {
    return this.held;
  }

  /** Renews the lease: false once the place is gone (lapsed, and taken by another stream). */
  async renew(): Promise<boolean> {
    if (this.released) return false;
    try {
      const kept = await this.limiter.renewStream(this.lease);
      if (!kept) this.log.warn("a live stream lost its place among its key family's; the stream ends");
      return kept;
    } catch (err) {
      this.log.warn("could not renew a live stream's place; renewing at the next beat", {
        error: loggableError(err),
      });
      return true;
    }
  }

  /** Gives the place back, once. */
  release(): void {
    if (this.released) return;
    this.released = true;
    const given = (async () => this.limiter.releaseStream(this.lease.id))().catch((err: unknown) => {
      this.log.warn("could not give a live stream's place back; it lapses with its lease", {
        error: loggableError(err),
      });
    });
    this.waitUntil(given);
  }
}
