// What of drizzle-orm the deployed build (scripts/build.mjs) stands in for: code that a SQLite
// Worker which passes no schema never runs, but that esbuild keeps because a module it uses imports
// it or a class it uses holds it (a class's methods are never tree-shaken). Each stand-in is checked
// against the package's text at each build, so an upgrade that changes it fails the build;
// scripts/check-deploy.mjs bounds what is left.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "@babel/parser";

/**
 * drizzle-orm's `sql.js`, which every SQL template runs through, imports `isPgEnum` from its
 * Postgres columns' module to tell a Postgres enum among a template's chunks, and with it the
 * Postgres column classes (5 KB of the build) that a SQLite Worker never makes. In the deployed
 * build that import is the same function alone, as drizzle-orm writes it (the text is checked
 * against the package's at each build, so an upgrade that changes it fails the build).
 */
const PG_ENUM_CHECK = `const isPgEnumSym = Symbol.for("drizzle:isPgEnum");
function isPgEnum(obj) {
  return !!obj && typeof obj === "function" && isPgEnumSym in obj && obj[isPgEnumSym] === true;
}`;
export const pgEnumCheckPlugin = {
  name: "pg-enum-check",
  setup(build) {
    build.onResolve({ filter: /^\.\.\/pg-core\/columns\/enum\.js$/ }, ({ importer, resolveDir }) =>
      /[\\/]node_modules[\\/]drizzle-orm[\\/]sql[\\/]sql\.js$/.test(importer)
        ? { path: join(resolveDir, "..", "pg-core", "columns", "enum.js"), namespace: "pg-enum-check" }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "pg-enum-check" }, ({ path }) => {
      if (!readFileSync(path, "utf8").includes(PG_ENUM_CHECK)) {
        throw new Error(`${path} no longer defines isPgEnum as scripts/lib/drizzle-stand-ins.mjs copies it`);
      }
      return { contents: `${PG_ENUM_CHECK}\nexport { isPgEnum };\n`, loader: "js" };
    });
  },
};

/**
 * What of drizzle-orm only its relational query API (`db.query.*`, set up from a `schema` given to
 * `drizzle()`), `db.$count`, `db.with`, transactions and its migrator use: src/db/client.ts passes
 * no schema, nothing in src/ calls those methods (D1 refuses a transaction's `begin`) and
 * migrations are wrangler's, yet `BaseSQLiteDatabase`, the D1 session and the dialect import those
 * modules and hold those methods, so esbuild keeps them (a class's methods are never tree-shaken):
 * 9.1 KB of the build that no request runs. In the
 * deployed build each such module is one of the same exports, and each such method keeps its
 * signature, each throwing if called or made; src/db/client.ts's `Db` has none of the methods, so
 * a call in src/ is a type error. The modules' export lists and the methods are found in the
 * package's text at each build: another shape (an upgrade) fails it.
 */
export const DRIZZLE_UNUSED_MODULES = [
  "relations.js",
  "sqlite-core/query-builders/query.js",
  "sqlite-core/query-builders/count.js",
];
/** By module, class and method. */
export const DRIZZLE_UNUSED_METHODS = {
  "sqlite-core/dialect.js": { SQLiteDialect: ["buildRelationalQuery"], SQLiteAsyncDialect: ["migrate"] },
  "sqlite-core/db.js": {
    BaseSQLiteDatabase: ["$count", "with", "transaction"],
  },
  "d1/session.js": { SQLiteD1Session: ["transaction"] },
};
const LEFT_OUT = `throw new Error("the deployed build has none of drizzle-orm's relational queries, $count, with, transactions and migrator (scripts/lib/drizzle-stand-ins.mjs)");`;

/** A module of `source`'s exports, each a function that throws. */
function drizzleModuleStandIn(source, path) {
  const lists = [...source.matchAll(/^export \{([^}]*)\};?$/gm)];
  const names =
    lists.length === 1
      ? lists[0][1]
          .split(",")
          .map((name) => name.trim())
          .filter(Boolean)
      : [];
  if (
    names.length === 0 ||
    /^export (?!\{)/m.test(source) ||
    names.some((n) => !/^[A-Za-z_$][\w$]*$/.test(n))
  ) {
    throw new Error(`${path}: not the exports scripts/lib/drizzle-stand-ins.mjs stands in for`);
  }
  return [
    `function none() { ${LEFT_OUT} }`,
    `export { ${names.map((name) => `none as ${name}`).join(", ")} };`,
  ].join("\n");
}

/** `source` with the bodies of `methods` (by class) a throw each. */
function withoutMethods(source, methods, path) {
  const { program } = parse(source, { sourceType: "module" });
  const edits = [];
  for (const [className, names] of Object.entries(methods)) {
    const node = program.body.find((n) => n.type === "ClassDeclaration" && n.id?.name === className);
    for (const name of names) {
      const method = node?.body.body.find(
        (m) => m.type === "ClassMethod" && !m.computed && m.key.name === name,
      );
      if (!method)
        throw new Error(
          `${path}: no method ${className}.${name} for scripts/lib/drizzle-stand-ins.mjs to leave out`,
        );
      edits.push(method.body);
    }
  }
  let text = source;
  for (const body of edits.sort((a, b) => b.start - a.start)) {
    text = `${text.slice(0, body.start)}{ ${LEFT_OUT} }${text.slice(body.end)}`;
  }
  return text;
}

export const drizzleUnusedPlugin = {
  name: "drizzle-unused",
  setup(build) {
    const inDrizzle = /[\\/]node_modules[\\/]drizzle-orm[\\/](.+)$/;
    build.onLoad({ filter: /[\\/]node_modules[\\/]drizzle-orm[\\/].*\.js$/ }, ({ path }) => {
      const module = inDrizzle.exec(path)[1].replaceAll("\\", "/");
      if (DRIZZLE_UNUSED_MODULES.includes(module)) {
        return { contents: drizzleModuleStandIn(readFileSync(path, "utf8"), path), loader: "js" };
      }
      const methods = DRIZZLE_UNUSED_METHODS[module];
      if (methods)
        return { contents: withoutMethods(readFileSync(path, "utf8"), methods, path), loader: "js" };
      return undefined;
    });
  },
};
