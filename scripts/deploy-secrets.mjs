#!/usr/bin/env node
// `node scripts/deploy-secrets.mjs <file>`: the Worker's secrets, from this process's environment
// (the deploy workflow passes the GitHub environment's secrets), written as the JSON file that
// `wrangler deploy --secrets-file <file>` uploads with the new version (docs/deploy.md).
//   ADMIN_TOKEN             required, at least 32 characters
//   VARIABLES_KEY           required, base64 of 32 bytes (`openssl rand -base64 32`)
//   VARIABLES_KEY_PREVIOUS  optional, only while rotating VARIABLES_KEY; same form
// A missing or malformed value stops the deploy before anything is uploaded. Values are never
// printed; the file is readable by its owner only. Secrets left out are not deleted by wrangler
// (an upload is additive): `wrangler secret delete` removes one.
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export function deploySecrets(env) {
  const problems = [];
  const secrets = {};
  const key = (name, required) => {
    const value = env[name] ?? "";
    if (!value) {
      if (required) problems.push(`${name} is not set`);
      return;
    }
    if (!/^[A-Za-z0-9+/]{43}=$/.test(value) || Buffer.from(value, "base64").length !== 32)
      problems.push(`${name} is not base64 of 32 bytes (openssl rand -base64 32)`);
    secrets[name] = value;
  };
  const token = env.ADMIN_TOKEN ?? "";
  if (!token) problems.push("ADMIN_TOKEN is not set");
  else if (token.length < 32) problems.push("ADMIN_TOKEN is shorter than 32 characters");
  else secrets.ADMIN_TOKEN = token;
  key("VARIABLES_KEY", true);
  key("VARIABLES_KEY_PREVIOUS", false);
  if (secrets.VARIABLES_KEY && secrets.VARIABLES_KEY === secrets.VARIABLES_KEY_PREVIOUS)
    problems.push("VARIABLES_KEY_PREVIOUS is the same key as VARIABLES_KEY");
  return { secrets, problems };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const file = process.argv[2];
  if (!file) {
    console.error("usage: node scripts/deploy-secrets.mjs <file>");
    process.exit(2);
  }
  const { secrets, problems } = deploySecrets(process.env);
  if (problems.length > 0) {
    for (const p of problems) console.error(`deploy-secrets: ${p}`);
    console.error("Set them as secrets of this GitHub environment (docs/deploy.md).");
    process.exit(1);
  }
  writeFileSync(file, `${JSON.stringify(secrets)}\n`, { mode: 0o600 });
  console.log(`deploy-secrets: ${Object.keys(secrets).join(", ")} → ${file}`);
}
