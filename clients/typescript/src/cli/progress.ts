import type { Output } from "./io.js";

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

export type Progress = {
  update(text: string): void;
  /** Clears the line for a line of output; the next frame draws it again below. */
  clear(): void;
  stop(): void;
};

export type ProgressOptions = {
  /** Show the time elapsed since this instant (ms since the epoch) after the text, e.g. `(1m05s)`. */
  since?: number;
  now?: () => number;
};

/**
 * A spinner and a status text on one line of a terminal, redrawn in place. The elapsed time is
 * read off the clock at every frame, not when the text changes: a long poll may bring no news
 * for a minute. On anything else (a CI log, a pipe) it writes nothing: the result lines say
 * everything there.
 */
export function progress(out: Output, enabled = out.isTTY === true, options: ProgressOptions = {}): Progress {
  if (!enabled) return { update() {}, clear() {}, stop() {} };
  const now = options.now ?? Date.now;
  let text = "";
  let frame = 0;
  const draw = () => {
    if (text === "") return;
    const elapsed = options.since === undefined ? "" : ` (${duration(now() - options.since)})`;
    out.write(`\r${FRAMES[frame++ % FRAMES.length]} ${text}${elapsed}\x1b[K`);
  };
  const timer = setInterval(draw, 100);
  timer.unref?.();
  return {
    update(next) {
      text = next;
      draw();
    },
    clear() {
      if (text !== "") out.write("\r\x1b[K");
    },
    stop() {
      clearInterval(timer);
      out.write("\r\x1b[K");
    },
  };
}

/** `75s` → `1m15s`. */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
}
