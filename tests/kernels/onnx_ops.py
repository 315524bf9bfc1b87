"""Cases of the ops that carry ONNX operators' semantics: tfidf_vectorizer
(TfIdfVectorizer) and vision.all_class_non_max_suppression
(NonMaxSuppression), run in tests/kernels_numpy.py's namespace (Case, gen,
RNG, attrs_text come from there).  The references below are written from
the ONNX operator spec, one loop per rule."""


def tfidf_ref(x, lo, hi, skip, counts, indexes, pool, mode="TF", weights=None):
    levels, k = [], 0
    for n in range(1, hi + 1):
        start = counts[n - 1]
        end = counts[n] if n < len(counts) else len(pool)
        grams = [tuple(pool[g:g + n]) for g in range(start, end, n)]
        levels.append({g: indexes[k + i] for i, g in enumerate(grams)})
        k += len(grams)
    size = max(indexes) + 1
    rows = x.reshape(1, -1) if x.ndim == 1 else x
    out = np.zeros((len(rows), size), np.float32)
    for r, row in enumerate(rows):
        first = lo
        for d in range(1, skip + 2):
            if first > hi:
                break
            for s in range(len(row)):
                for n in range(first, hi + 1):
                    if s + (n - 1) * d >= len(row):
                        break
                    g = tuple(int(v) for v in row[s:s + (n - 1) * d + 1:d])
                    if g in levels[n - 1]:
                        out[r, levels[n - 1][g]] += 1
            first = max(first, 2)
    w = np.ones(size, np.float32) if weights is None else np.asarray(weights, np.float32)
    if mode == "IDF":
        out = (out > 0) * w
    elif mode == "TFIDF":
        out = out * w
    return out.reshape(-1) if x.ndim == 1 else out


@gen("tfidf_vectorizer")
def g_tfidf(op):
    pool, counts, indexes = [2, 3, 5, 4, 5, 6, 7, 8, 6, 7], [0, 4], [0, 1, 2, 3, 4, 5, 6]
    for shape in ((12,), (2, 6), (3, 5)):
        for lo, hi, skip in ((1, 1, 0), (2, 2, 0), (1, 2, 3), (2, 2, 5)):
            for mode in ("TF", "IDF", "TFIDF"):
                x = RNG.integers(2, 9, shape).astype(RNG.choice([np.int32, np.int64]))
                c = counts[:hi] if hi > 1 else counts[:1]
                p = pool if hi > 1 else pool[:4]
                ix = indexes if hi > 1 else indexes[:4]
                w = [0.5 + i for i in range(max(ix) + 1)] if mode != "TF" else None
                kw = dict(min_gram_length=lo, max_gram_length=hi, max_skip_count=skip, mode=mode,
                          ngram_counts=c, ngram_indexes=ix, pool_int64s=p)
                text = attrs_text(**kw)
                if w:
                    text += ", weights=[%s]" % ", ".join("%gf" % v for v in w)
                yield Case(op, text, [x], [tfidf_ref(x, lo, hi, skip, c, ix, p, mode, w)])
    yield Case(op, attrs_text(max_gram_length=2, ngram_counts=[0, 2], ngram_indexes=[0, 1], pool_int64s=[1, 2, 3]),
               [np.array([1, 2], np.int64)], "pool level 1 does not hold whole")


def nms_iou(a, b, center):
    def corners(t):
        if center:
            return t[1] - t[3] / 2, t[0] - t[2] / 2, t[1] + t[3] / 2, t[0] + t[2] / 2
        return min(t[0], t[2]), min(t[1], t[3]), max(t[0], t[2]), max(t[1], t[3])
    ay0, ax0, ay1, ax1 = corners(a)
    by0, bx0, by1, bx1 = corners(b)
    iw, ih = min(ax1, bx1) - max(ax0, bx0), min(ay1, by1) - max(ay0, by0)
    if iw <= 0 or ih <= 0:
        return 0.0
    aa, ab = (ax1 - ax0) * (ay1 - ay0), (bx1 - bx0) * (by1 - by0)
    inter = iw * ih
    return inter / (aa + ab - inter) if aa > 0 and ab > 0 and aa + ab - inter > 0 else 0.0


def all_class_nms_ref(boxes, scores, maxo, iou, sthr, center):
    bx, sc = boxes.astype(np.float64), scores.astype(np.float64)
    nb, nc, n = scores.shape
    rows = []
    for b in range(nb):
        for c in range(nc):
            order = sorted((i for i in range(n) if sc[b, c, i] > float(sthr)), key=lambda i: (-sc[b, c, i], i))
            keep = []
            for i in order:
                if len(keep) >= maxo:
                    break
                if all(nms_iou(bx[b, i], bx[b, j], center) <= float(iou) for j in keep):
                    keep.append(i)
            rows += [[b, c, i] for i in keep]
    out = np.zeros((nb * nc * n, 3), np.int64)
    if rows:
        out[:len(rows)] = rows
    return [out, np.array([len(rows)], np.int64)]


@gen("vision.all_class_non_max_suppression")
def g_all_class_nms(op):
    for dt in (np.float32, np.float64):
        for center in (0, 1):
            for _ in range(4):
                nb, nc, n = (int(v) for v in RNG.integers(1, 4, 3)) if RNG.random() < .8 else (1, 1, 0)
                boxes = RNG.random((nb, n, 4)).astype(dt)
                scores = RNG.choice([0.1, 0.5, 0.7, 0.9], (nb, nc, n)).astype(dt)
                maxo = np.array(int(RNG.integers(0, 4)), np.int64)
                iou, sthr = np.array(RNG.choice([0.0, 0.3, 0.6]), dt), np.array(RNG.choice([0.0, 0.5]), dt)
                yield Case(op, attrs_text(center_point_box=center), [boxes, scores, maxo, iou, sthr],
                           all_class_nms_ref(boxes, scores, int(maxo), iou, sthr, center))
    yield Case(op, "", [np.zeros((1, 2, 4), np.float32), np.zeros((1, 1, 3), np.float32), np.array(1, np.int64),
                        np.array(0.5, np.float32), np.array(0, np.float32)], "do not match")
