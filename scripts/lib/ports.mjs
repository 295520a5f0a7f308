// A port for a server that a script starts later (wrangler's --port and --inspector-port, the
// walk's OIDC issuer), chosen where nothing else will take it in the meantime.
//
// A port the kernel hands out for `listen(0)` comes from the ephemeral range (Linux:
// 32768-60999), the same range every outgoing connection's local port comes from. Between our
// choosing it and wrangler binding it (after a fresh state's migrations: 40 s or more beside the
// other lanes of `npm test`), a connection may take it: CI once failed with wrangler's
// "Address already in use (socket "direct:1:default")", its inspector's socket on such a port.
// Below the ephemeral range, a port is taken only by a server that asks for it by number.
import { createServer } from "node:net";

const LOW = 20_000;
const HIGH = 32_000;

/** Whether `port` can be listened on at `host` now (an address the machine lacks counts as free). */
function free(port, host) {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", (err) => resolve(err.code === "EADDRNOTAVAIL" || err.code === "EAFNOSUPPORT"));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/** A port in [20000, 32000) that nothing listens on, on 127.0.0.1 or ::1. */
export async function sparePort() {
  for (let i = 0; i < 200; i++) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW));
    if ((await free(port, "127.0.0.1")) && (await free(port, "::1"))) return port;
  }
  throw new Error(`no free port in [${LOW}, ${HIGH}) after 200 tries`);
}
