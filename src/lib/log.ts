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
  const write = (level: "info" | "warn" | "error", msg: string, fields?: LogFields) => {
    const line = JSON.stringify({ level, msg, ...base, ...fields });
    if (level === "error") console.error(line);
    else if (level === "warn") console.warn(line);
    else console.log(line);
  };
  return {
    info: (msg, fields) => write("info", msg, fields),
    warn: (msg, fields) => write("warn", msg, fields),
    error: (msg, fields) => write("error", msg, fields),
    with: (fields) => createLogger({ ...base, ...fields }),
  };
}
