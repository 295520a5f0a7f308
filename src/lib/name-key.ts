/**
 * The key a name is unique under (API_CONTRACT §3: project names per organization; §23:
 * environment names per project), regardless of letter case and of how its characters are
 * composed: the name in Unicode's composed form (NFC), in lower case.
 *
 * `toLowerCase` is Unicode's default case conversion, which is what `toLocaleLowerCase("und")`
 * (the keys stored before this module) applies for a locale without language-specific mappings:
 * the same key for every string (test/unit/name-key.test.ts holds it to that), without the
 * locale's canonicalization that the ICU call starts with, which loads ICU's locale alias data
 * on an isolate's first use (~2.6 M instructions of a new isolate's first create:
 * bench/first-instructions.mjs).
 */
export function nameKey(name: string): string {
  return name.normalize("NFC").toLowerCase();
}
