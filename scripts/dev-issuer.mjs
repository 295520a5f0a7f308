#!/usr/bin/env node
// `npm run dev:issuer`: a local OpenID Connect issuer, to try `deploy-platform login --oidc` and
// the token exchange (API_CONTRACT §27) against `npm run dev`, which admits an http:// issuer on
// this machine (.dev.vars: ALLOW_INSECURE_OIDC_ISSUERS=true). The issuer is the tests' own
// (scripts/lib/oidc-issuer.mjs): discovery and JWKS over http, keys made when it starts.
//
//   npm run dev:issuer [-- --port N]      serves http://127.0.0.1:8790 (or N, or $DEV_ISSUER_PORT)
//                                         until Ctrl-C; prints its addresses and the variables
//                                         that make a shell look like a GitHub Actions runner
//   npm run -s dev:issuer -- token [name=value…] [--aud AUD] [--ttl SECONDS] [--key rsa-1|ec-1]
//                                         prints an ID token of the running issuer with the claims
//                                         named (a value that reads as JSON is taken as JSON:
//                                         run_id=42 is a number); iss, aud (default
//                                         deploy-platform), iat, nbf, exp (--ttl, default 300) and
//                                         jti are filled in unless named. Waits up to 10 s for an
//                                         issuer started a moment before (`npm run dev:issuer &`).
//   npm run -s dev:issuer -- stop         stops the running issuer (one started with `&`: npm does
//                                         not pass a kill of itself on to it)
import { fileURLToPath } from "node:url";
import { startIssuer } from "./lib/oidc-issuer.mjs";

const DEFAULT_PORT = 8790;

/** `--name value` options and `name=value` claims of `args`. */
function parse(args) {
  const options = {};
  const claims = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg.startsWith("--")) {
      const [name, inline] = arg.slice(2).split(/=(.*)/s);
      options[name] = inline ?? args[++i];
      if (options[name] === undefined) throw new Error(`${arg} needs a value`);
    } else if (arg.includes("=")) {
      const [name, value] = arg.split(/=(.*)/s);
      try {
        claims[name] = JSON.parse(value);
      } catch {
        claims[name] = value;
      }
    } else throw new Error(`not a claim (name=value) or an option (--name value): ${arg}`);
  }
  return { options, claims };
}

const portOf = (options) => Number(options.port ?? process.env.DEV_ISSUER_PORT ?? DEFAULT_PORT);

async function serve(options) {
  const port = portOf(options);
  let issuer;
  try {
    issuer = await startIssuer({ port, onStop: () => stop() });
  } catch (err) {
    if (err.code !== "EADDRINUSE") throw err;
    console.error(`dev-issuer: port ${port} is taken (another dev:issuer?): pass --port N`);
    process.exit(10);
  }
  const o = issuer.origin;
  console.log(`dev-issuer: an OpenID Connect issuer on ${o} (keys made now, gone when it stops)
  issuer     ${o}   (a trust's "issuer", exactly)
  discovery  ${o}/.well-known/openid-configuration
  keys       ${o}/jwks
  a token    npm run -s dev:issuer -- token repository=acme/storefront ref=refs/heads/main --aud deploy-platform${port === DEFAULT_PORT ? "" : ` --port ${port}`}
  a runner   export ACTIONS_ID_TOKEN_REQUEST_URL='${issuer.env.ACTIONS_ID_TOKEN_REQUEST_URL}' ACTIONS_ID_TOKEN_REQUEST_TOKEN=${issuer.env.ACTIONS_ID_TOKEN_REQUEST_TOKEN}
             (then \`deploy-platform login --oidc\` asks this issuer as a GitHub Actions job asks GitHub)
Ctrl-C (or \`npm run -s dev:issuer -- stop\`) stops it.`);
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  function stop() {
    issuer.close().then(() => process.exit(0));
  }
}

async function stopIssuer(options) {
  const base = `http://127.0.0.1:${portOf(options)}`;
  const res = await fetch(`${base}/stop`, { method: "POST" }).catch(() => null);
  if (res?.status !== 204) {
    console.error(`dev-issuer: no issuer to stop at ${base}`);
    process.exit(12);
  }
}

async function token(options, claims) {
  const base = `http://127.0.0.1:${portOf(options)}`;
  const body = JSON.stringify({
    claims,
    audience: options.aud ?? "deploy-platform",
    ttl: Number(options.ttl ?? 300),
    key: options.key ?? "rsa-1",
  });
  const end = Date.now() + 10_000;
  for (;;) {
    try {
      const res = await fetch(`${base}/token`, { method: "POST", body });
      const answer = await res.json();
      if (!res.ok) throw Object.assign(new Error(answer.message), { refused: true });
      process.stdout.write(`${answer.token}\n`);
      return;
    } catch (err) {
      if (err.refused) {
        console.error(`dev-issuer: ${base} refused: ${err.message}`);
        process.exit(10);
      }
      if (Date.now() > end) {
        console.error(`dev-issuer: no issuer answers at ${base} (is \`npm run dev:issuer\` running?)`);
        process.exit(12);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [command, ...rest] = process.argv.slice(2);
  try {
    if (command === "stop") await stopIssuer(parse(rest).options);
    else if (command === "token") {
      const { options, claims } = parse(rest);
      await token(options, claims);
    } else {
      const { options } = parse(command === undefined || command === "serve" ? rest : [command, ...rest]);
      await serve(options);
    }
  } catch (err) {
    console.error(`dev-issuer: ${err.message}`);
    process.exit(10);
  }
}
