/* npz.c — .npz files: a zip archive of KEY.npy entries (tensor_io.h).
 *
 * Reading trusts only the central directory, found from the end-of-central-
 * directory record (zip64 records when a field is saturated), and checks
 * every offset and size against the file before use: each entry's local
 * header and data must lie inside the file, no two entries' data may
 * overlap, stored entries must have equal sizes, a deflated entry's
 * declared size must be reachable from its compressed size (deflate expands
 * at most ~1032:1), the inflated size and CRC-32 must match.  Encrypted
 * entries and other methods are refused.
 *
 * Writing produces stored (uncompressed) entries like np.savez; files above
 * 4 GiB (which would need zip64) are refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "io/tensor_io_int.h"

enum {
  SIG_LOCAL = 0x04034b50,
  SIG_CENTRAL = 0x02014b50,
  SIG_EOCD = 0x06054b50,
  SIG_EOCD64 = 0x06064b50,
  SIG_LOC64 = 0x07064b50,
  EOCD_LEN = 22,
  CENTRAL_LEN = 46,
  LOCAL_LEN = 30,
  DEFLATE_MAX_RATIO = 1032,
};

typedef struct ZipEntry {
  const uint8_t *name;
  size_t name_len;
  unsigned method, flags;
  uint32_t crc;
  uint64_t csize, usize, local;
  uint64_t data; /* offset of the data, after the local header */
} ZipEntry;

typedef struct Zip {
  const uint8_t *p;
  size_t n;
  uint64_t cd_off, cd_size, count;
} Zip;

/* ───────────────────────── directory ───────────────────────── */

static bool find_eocd(const uint8_t *p, size_t n, size_t *at, char *why, size_t wn) {
  if (n < EOCD_LEN) return tio_fail(why, wn, "truncated zip (%zu bytes)", n);
  size_t lo = n > EOCD_LEN + 65535 ? n - EOCD_LEN - 65535 : 0;
  for (size_t i = n - EOCD_LEN + 1; i-- > lo;)
    if (tio_rd32(p + i) == SIG_EOCD && i + EOCD_LEN + tio_rd16(p + i + 20) <= n) {
      *at = i;
      return true;
    }
  return tio_fail(why, wn, "not a zip archive (no end-of-central-directory record)");
}

static bool read_eocd64(Zip *z, size_t eocd, char *why, size_t wn) {
  if (eocd < 20 || tio_rd32(z->p + eocd - 20) != SIG_LOC64)
    return tio_fail(why, wn, "zip64 end-of-central-directory locator missing");
  uint64_t off = tio_rd64(z->p + eocd - 12);
  if (off > z->n || z->n - off < 56 || tio_rd32(z->p + off) != SIG_EOCD64)
    return tio_fail(why, wn, "zip64 end-of-central-directory record out of range or corrupt");
  z->count = tio_rd64(z->p + off + 32);
  z->cd_size = tio_rd64(z->p + off + 40);
  z->cd_off = tio_rd64(z->p + off + 48);
  return true;
}

/* Locates the central directory from the end record (or the zip64 one
 * when a field is saturated) and checks that it lies inside the file and
 * can hold the entry count it claims. */
static bool read_directory_bounds(Zip *z, char *why, size_t wn) {
  size_t e = 0;
  if (!find_eocd(z->p, z->n, &e, why, wn)) return false;
  const uint8_t *q = z->p + e;
  if (tio_rd16(q + 4) != 0 || tio_rd16(q + 6) != 0)
    return tio_fail(why, wn, "multi-disk zip archives are not supported");
  z->count = tio_rd16(q + 10);
  z->cd_size = tio_rd32(q + 12);
  z->cd_off = tio_rd32(q + 16);
  if ((z->count == 0xffff || z->cd_size == 0xffffffffu || z->cd_off == 0xffffffffu) &&
      !read_eocd64(z, e, why, wn))
    return false;
  if (z->cd_off > z->n || z->cd_size > z->n - z->cd_off)
    return tio_fail(why, wn,
                    "central directory (offset %llu, %llu bytes) lies outside the "
                    "file (%zu bytes)",
                    (unsigned long long)z->cd_off, (unsigned long long)z->cd_size, z->n);
  if (z->count > z->cd_size / CENTRAL_LEN)
    return tio_fail(why, wn, "central directory claims %llu entries in %llu bytes",
                    (unsigned long long)z->count, (unsigned long long)z->cd_size);
  return true;
}

/* The zip64 extra field (id 1) holds, in order, the saturated fields. */
static bool zip64_extra(ZipEntry *ze, const uint8_t *x, size_t xn, char *why, size_t wn) {
  while (xn >= 4) {
    unsigned id = tio_rd16(x), len = tio_rd16(x + 2);
    if (len > xn - 4) return tio_fail(why, wn, "extra field runs past its entry");
    if (id == 1) {
      size_t k = 0;
      uint64_t *fields[] = {&ze->usize, &ze->csize, &ze->local};
      for (int i = 0; i < 3; i++) {
        if (*fields[i] != 0xffffffffu) continue;
        if (k + 8 > len) return tio_fail(why, wn, "zip64 extra field too short");
        *fields[i] = tio_rd64(x + 4 + k), k += 8;
      }
    }
    x += 4 + len, xn -= 4 + (size_t)len;
  }
  return true;
}

static bool read_central(const Zip *z, size_t *pos, ZipEntry *ze, char *why, size_t wn) {
  size_t end = (size_t)(z->cd_off + z->cd_size), at = *pos;
  if (end - at < CENTRAL_LEN || tio_rd32(z->p + at) != SIG_CENTRAL)
    return tio_fail(why, wn, "corrupt central directory entry at offset %zu", at);
  const uint8_t *q = z->p + at;
  size_t nl = tio_rd16(q + 28), xl = tio_rd16(q + 30), cl = tio_rd16(q + 32);
  if (nl + xl + cl > end - at - CENTRAL_LEN)
    return tio_fail(why, wn, "central directory entry at offset %zu runs past the directory", at);
  *ze = (ZipEntry){.name = q + CENTRAL_LEN,
                   .name_len = nl,
                   .flags = tio_rd16(q + 8),
                   .method = tio_rd16(q + 10),
                   .crc = tio_rd32(q + 16),
                   .csize = tio_rd32(q + 20),
                   .usize = tio_rd32(q + 24),
                   .local = tio_rd32(q + 42)};
  if (!zip64_extra(ze, q + CENTRAL_LEN + nl, xl, why, wn)) return false;
  *pos = at + CENTRAL_LEN + nl + xl + cl;
  return true;
}

/* Finds the data through the local header and checks the entry's ranges. */
static bool locate_data(const Zip *z, ZipEntry *ze, const char *name, char *why, size_t wn) {
  if (ze->local > z->n || z->n - ze->local < LOCAL_LEN || tio_rd32(z->p + ze->local) != SIG_LOCAL)
    return tio_fail(why, wn, "entry '%s': local header offset %llu is out of range or corrupt",
                    name, (unsigned long long)ze->local);
  const uint8_t *q = z->p + ze->local;
  uint64_t data = ze->local + LOCAL_LEN + tio_rd16(q + 26) + tio_rd16(q + 28);
  if (data > z->n || ze->csize > z->n - data)
    return tio_fail(why, wn,
                    "entry '%s': data (%llu bytes at offset %llu) runs past the end "
                    "of the file (%zu bytes)",
                    name, (unsigned long long)ze->csize, (unsigned long long)data, z->n);
  ze->data = data;
  return true;
}

/* ───────────────────────── entry contents ───────────────────────── */

static bool inflate_entry(const ZipEntry *ze, uint8_t *out, const uint8_t *in, char *why,
                          size_t wn) {
  z_stream s = {0};
  if (inflateInit2(&s, -MAX_WBITS) != Z_OK) return tio_fail(why, wn, "zlib initialization failed");
  uint64_t in_left = ze->csize, out_left = ze->usize;
  s.next_in = (Bytef *)(uintptr_t)in, s.next_out = out;
  int rc = Z_OK;
  while (rc == Z_OK) {
    uInt ci = in_left > (1u << 30) ? 1u << 30 : (uInt)in_left;
    uInt co = out_left > (1u << 30) ? 1u << 30 : (uInt)out_left;
    s.avail_in = ci, s.avail_out = co;
    rc = inflate(&s, Z_FINISH);
    in_left -= ci - s.avail_in, out_left -= co - s.avail_out;
    if (rc == Z_BUF_ERROR && (in_left || out_left) && (ci != s.avail_in || co != s.avail_out))
      rc = Z_OK; /* progress was made on a chunk; go on */
  }
  bool ok = rc == Z_STREAM_END && !out_left;
  if (!ok)
    tio_fail(why, wn, "corrupt deflate data (%s)",
             rc == Z_STREAM_END ? "shorter than declared"
             : s.msg            ? s.msg
                                : "truncated");
  inflateEnd(&s);
  return ok;
}

/* The entry's uncompressed bytes (malloc'd unless stored: then *owned is
 * false and the result points into the archive). */
static const uint8_t *entry_bytes(const Zip *z, const ZipEntry *ze, bool *owned, char *why,
                                  size_t wn) {
  const uint8_t *src = z->p + ze->data;
  *owned = false;
  if (ze->method == 0) return src;
  if (ze->usize > rt_max_bytes() || ze->usize / DEFLATE_MAX_RATIO > ze->csize + 1)
    return tio_fail(why, wn, "declared size %llu is impossible for %llu deflated bytes",
                    (unsigned long long)ze->usize, (unsigned long long)ze->csize),
           NULL;
  uint8_t *out = malloc(ze->usize ? (size_t)ze->usize : 1);
  if (!out)
    return tio_fail(why, wn, "cannot allocate %llu bytes", (unsigned long long)ze->usize), NULL;
  if (!inflate_entry(ze, out, src, why, wn)) return free(out), NULL;
  *owned = true;
  return out;
}

static bool check_entry_header(const ZipEntry *ze, char *why, size_t wn) {
  if (ze->flags & 1) return tio_fail(why, wn, "encrypted entries are not supported");
  if (ze->method != 0 && ze->method != 8)
    return tio_fail(why, wn, "compression method %u is not supported (stored and deflated are)",
                    ze->method);
  if (ze->method == 0 && ze->csize != ze->usize)
    return tio_fail(why, wn, "stored entry with compressed size %llu != size %llu",
                    (unsigned long long)ze->csize, (unsigned long long)ze->usize);
  return true;
}

static bool read_entry(const Zip *z, const ZipEntry *ze, RtTensor **t, char *why, size_t wn) {
  if (!check_entry_header(ze, why, wn)) return false;
  bool owned;
  const uint8_t *bytes = entry_bytes(z, ze, &owned, why, wn);
  if (!bytes) return false;
  uint32_t crc = (uint32_t)crc32_z(0, bytes, (z_size_t)ze->usize);
  bool ok = crc == ze->crc ? tio_npy_parse(bytes, (size_t)ze->usize, t, why, wn)
                           : tio_fail(why, wn, "CRC-32 mismatch (data corrupt)");
  if (owned) free((void *)(uintptr_t)bytes);
  return ok;
}

/* ───────────────────────── the archive ───────────────────────── */

/* "w.npy" → "w"; names must be printable, without NUL. */
static bool entry_key(const ZipEntry *ze, char *key, size_t cap, char *why, size_t wn) {
  size_t n = ze->name_len;
  if (n == 0 || n >= cap) return tio_fail(why, wn, "entry name of length %zu", n);
  memcpy(key, ze->name, n);
  key[n] = 0;
  if (strlen(key) != n) return tio_fail(why, wn, "entry name contains a NUL byte");
  if (n > 4 && strcmp(key + n - 4, ".npy") == 0) key[n - 4] = 0;
  return true;
}

static int cmp_data(const void *a, const void *b) {
  const ZipEntry *x = a, *y = b;
  return x->data < y->data ? -1 : x->data > y->data;
}

static bool check_overlaps(ZipEntry *es, uint64_t n, char *why, size_t wn) {
  qsort(es, (size_t)n, sizeof *es, cmp_data);
  for (uint64_t i = 1; i < n; i++)
    if (es[i - 1].data + es[i - 1].csize > es[i].local)
      return tio_fail(why, wn, "entries '%.*s' and '%.*s' overlap", (int)es[i - 1].name_len,
                      (const char *)es[i - 1].name, (int)es[i].name_len, (const char *)es[i].name);
  return true;
}

static bool read_entries(const Zip *z, ZipEntry *es, char *why, size_t wn) {
  size_t pos = (size_t)z->cd_off;
  char key[512], msg[RT_ERR_LEN];
  for (uint64_t i = 0; i < z->count; i++) {
    if (!read_central(z, &pos, &es[i], why, wn)) return false;
    if (!entry_key(&es[i], key, sizeof key, why, wn)) return false;
    if (!locate_data(z, &es[i], key, msg, sizeof msg)) return tio_fail(why, wn, "%s", msg);
  }
  return check_overlaps(es, z->count, why, wn);
}

/* Reads every entry of an .npz, in the order of their data in the file
 * (the order np.savez wrote them), as tensors named by key. */
bool tio_npz_parse(const uint8_t *p, size_t n, TioFile *out, char *why, size_t wn) {
  Zip z = {p, n, 0, 0, 0};
  if (!read_directory_bounds(&z, why, wn)) return false;
  ZipEntry *es = calloc(z.count ? (size_t)z.count : 1, sizeof *es);
  if (!es) rly_oom();
  bool ok = read_entries(&z, es, why, wn);
  qsort(es, ok ? (size_t)z.count : 0, sizeof *es, cmp_data); /* file order */
  char key[512], msg[RT_ERR_LEN];
  for (uint64_t i = 0; ok && i < z.count; i++) {
    RtTensor *t = NULL;
    entry_key(&es[i], key, sizeof key, NULL, 0);
    ok = read_entry(&z, &es[i], &t, msg, sizeof msg) && tio_add(out, key, t, msg, sizeof msg);
    if (!ok) tio_fail(why, wn, "entry '%s': %s", key, msg);
    rt_tensor_release(t);
  }
  free(es);
  return ok;
}

/* ───────────────────────── writing ───────────────────────── */

static void put_local(StrBuf *b, const char *name, uint32_t crc, uint32_t size) {
  tio_put32(b, SIG_LOCAL);
  tio_put16(b, 20);                    /* version needed: 2.0 */
  tio_put16(b, 0);                     /* flags */
  tio_put16(b, 0);                     /* stored */
  tio_put16(b, 0), tio_put16(b, 0x21); /* time, date: 1980-01-01 */
  tio_put32(b, crc), tio_put32(b, size), tio_put32(b, size);
  tio_put16(b, (uint16_t)strlen(name)), tio_put16(b, 0);
  sb_puts(b, name);
}

static void put_central(StrBuf *b, const char *name, uint32_t crc, uint32_t size, uint32_t off) {
  tio_put32(b, SIG_CENTRAL);
  tio_put16(b, 20), tio_put16(b, 20), tio_put16(b, 0), tio_put16(b, 0);
  tio_put16(b, 0), tio_put16(b, 0x21);
  tio_put32(b, crc), tio_put32(b, size), tio_put32(b, size);
  tio_put16(b, (uint16_t)strlen(name));
  tio_put16(b, 0), tio_put16(b, 0), tio_put16(b, 0), tio_put16(b, 0);
  tio_put32(b, 0x81a40000u); /* external attributes: a regular file, rw-r--r-- */
  tio_put32(b, off);
  sb_puts(b, name);
}

/* Writes a stored (uncompressed) zip of KEY.npy entries like np.savez;
 * refuses what would need zip64 (over 65535 entries or 4 GiB). */
bool tio_npz_encode(StrBuf *b, const TioFile *f, char *why, size_t wn) {
  if (f->n > 0xffff) return tio_fail(why, wn, "too many entries for a zip without zip64");
  StrBuf cd = {0};
  bool ok = true;
  for (int i = 0; i < f->n && ok; i++) {
    StrBuf npy = {0};
    tio_npy_encode(&npy, f->entries[i].t);
    char name[1024];
    snprintf(name, sizeof name, "%s.npy", f->entries[i].name);
    if (npy.len > 0xfffffffeu || b->len > 0xfffffffeu - npy.len)
      ok = tio_fail(why, wn, "entry '%s' is too large for a zip without zip64", name);
    if (ok) {
      uint32_t crc = (uint32_t)crc32_z(0, (const Bytef *)npy.data, npy.len);
      put_central(&cd, name, crc, (uint32_t)npy.len, (uint32_t)b->len);
      put_local(b, name, crc, (uint32_t)npy.len);
      sb_putn(b, npy.data, npy.len);
    }
    sb_free(&npy);
  }
  if (ok) {
    uint32_t cd_off = (uint32_t)b->len;
    sb_putn(b, cd.data, cd.len);
    tio_put32(b, SIG_EOCD);
    tio_put16(b, 0), tio_put16(b, 0);
    tio_put16(b, (uint16_t)f->n), tio_put16(b, (uint16_t)f->n);
    tio_put32(b, (uint32_t)cd.len), tio_put32(b, cd_off);
    tio_put16(b, 0);
  }
  sb_free(&cd);
  return ok;
}
