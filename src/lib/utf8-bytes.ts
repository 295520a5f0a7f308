/** The UTF-8 bytes of `text` (what D1 counts), without encoding it. */
export function utf8Bytes(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    // Two more for U+0800 and above, one for U+0080–U+07FF and for each half of a surrogate pair (4 in all).
    if (code >= 0x80) bytes += code >= 0x800 && (code < 0xd800 || code > 0xdfff) ? 2 : 1;
  }
  return bytes;
}
