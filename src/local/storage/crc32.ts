// CRC-32 (the IEEE polynomial of zlib, gzip and PNG) for the storage engine's record framing.
import zlib from 'node:zlib';

// Slicing-by-8 tables: table t at [t * 256, t * 256 + 256) advances the CRC over a byte that sits
// t bytes before the end of an 8-byte block, so the hot loop consumes 8 bytes per step.
const TABLE = (() => {
  const table = new Int32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c;
  }
  for (let n = 0; n < 256; n++) {
    let c = table[n] ?? 0;
    for (let t = 1; t < 8; t++) {
      c = (table[c & 0xff] ?? 0) ^ (c >>> 8);
      table[t * 256 + n] = c;
    }
  }
  return table;
})();

/**
 * The CRC-32 of `data`. Pass the result of a previous call as `previous` to continue a CRC over
 * several buffers (as `zlib.crc32(data, value)` does on newer Node versions).
 */
export function crc32(data: Uint8Array, previous = 0): number {
  // zlib's own is several times faster than the loop below, on the Node versions that have it.
  return native !== undefined ? native(data, previous) : crc32Js(data, previous);
}

const native = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;

/** The same CRC in JavaScript, for Node versions without zlib.crc32. */
export function crc32Js(data: Uint8Array, previous = 0): number {
  const t = TABLE;
  let crc = ~previous;
  let i = 0;
  const n = data.length;
  for (; i + 8 <= n; i += 8) {
    const low =
      crc ^
      ((data[i] ?? 0) |
        ((data[i + 1] ?? 0) << 8) |
        ((data[i + 2] ?? 0) << 16) |
        ((data[i + 3] ?? 0) << 24));
    crc =
      (t[1792 + (low & 0xff)] ?? 0) ^
      (t[1536 + ((low >>> 8) & 0xff)] ?? 0) ^
      (t[1280 + ((low >>> 16) & 0xff)] ?? 0) ^
      (t[1024 + (low >>> 24)] ?? 0) ^
      (t[768 + (data[i + 4] ?? 0)] ?? 0) ^
      (t[512 + (data[i + 5] ?? 0)] ?? 0) ^
      (t[256 + (data[i + 6] ?? 0)] ?? 0) ^
      (t[data[i + 7] ?? 0] ?? 0);
  }
  for (; i < n; i++) crc = (t[(crc ^ (data[i] ?? 0)) & 0xff] ?? 0) ^ (crc >>> 8);
  return ~crc >>> 0;
}
