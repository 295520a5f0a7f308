/**
 * One structured logger: a JSON line per entry on the console, which Workers Logs indexes.
 * Every entry carries the fields it was made with (`request_id` for a request, the message id
 * for a queue message), so a reader can follow one request through every line it wrote.
 */
export type LogFields = Record<string, unknown>;

export type Logger = {
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** The same logger with more fields on every entry. */
  with(fields: LogFields): Logger;
};

export function createLogger(base: LogFields): Logger {
  return new JsonLogger(base);
}

/** A class, so that a logger made per request is one object (its methods are on the prototype). */
class JsonLogger implements Logger {
  constructor(private readonly base: LogFields) {}

  info(msg: string, fields?: LogFields) {
    console.log(this.line("info", msg, fields));
  }

  warn(msg: string, fields?: LogFields) {
    console.warn(this.line("warn", msg, fields));
  }

  error(msg: string, fields?: LogFields) {
    console.error(this.line("error", msg, fields));
  }

  with(fields: LogFields): Logger {
    return new JsonLogger({ ...this.base, ...fields });
  }

  private line(level: "info" | "warn" | "error", msg: string, fields: LogFields | undefined) {
    return JSON.stringify({ level, msg, ...this.base, ...fields });
  }
}
