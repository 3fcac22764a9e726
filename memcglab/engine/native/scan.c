// SPDX-License-Identifier: GPL-2.0-only
/*
 * Scanner of the trace text format: bytes to OP_DTYPE rows, no Python per line (was the
 * numba code of memcglab/engine/scan.py, which keeps the scanner's Python side: its
 * state array, its constants and the wrapper that calls scan() below).
 *
 * It accepts exactly the lines memcglab.trace.parse_text accepts *syntactically*
 * (keywords, field counts, max=, nested, decimal integers and their ranges, the single
 * cpus line before any operation); the semantic rules (known CPUs and memcgs,
 * offlined memcgs, ...) are the validator's. At the first line it cannot accept it
 * stops and reports that line; the caller then asks parse_text for the exact message
 * (see memcglab/engine/textread.py).
 *
 * The header line is the caller's; the scanner starts on line 2. st carries the state
 * between calls: st[ST_CPUS_SEEN], st[ST_CPUS], st[ST_ROWS] (rows emitted so far, all
 * calls) and, after a refusal, st[ST_BAD_LINE] with the line's byte range
 * st[ST_BAD_START]:st[ST_BAD_END]. The keywords (SCAN_WORDS: the operations, then
 * cpus, nested, max=, irq, nodes, kmem and kmem=), the ST_* indices and the bounds are
 * memcglab_consts.h's, generated from memcglab.engine.scan and memcglab.trace.
 */

static const char *const WORDS[] = { SCAN_WORDS };

static int _is_word(const uint8_t *buf, int64_t s, int64_t e, int64_t w)
{
	size_t len = strlen(WORDS[w]);

	if (e - s != (int64_t)len)
		return 0;
	return memcmp(buf + s, WORDS[w], len) == 0;
}

/* Decimal digits in buf[s:e] whose value is within lo..hi (uint64); ok, and *value. */
static int _number(const uint8_t *buf, int64_t s, int64_t e, uint64_t lo, uint64_t hi,
		   uint64_t *value)
{
	uint64_t v = 0;

	*value = 0;
	if (s >= e)
		return 0;
	for (int64_t j = s; j < e; j++) {
		int64_t d = (int64_t)buf[j] - 48;
		uint64_t du;

		if (d < 0 || d > 9)
			return 0;
		du = (uint64_t)d;
		if (v > (hi - du) / 10)
			return 0;
		v = v * 10 + du;
	}
	*value = v;
	return v >= lo;
}

/* Split buf[s:e] at runs of spaces and tabs; -1 if there are more than 7 tokens. */
static int64_t _tokens(const uint8_t *buf, int64_t s, int64_t e, int64_t *st)
{
	int64_t n = 0, j = s;

	while (j < e) {
		int64_t start;

		while (j < e && (buf[j] == 32 || buf[j] == 9))
			j += 1;
		if (j >= e)
			break;
		start = j;
		while (j < e && buf[j] != 32 && buf[j] != 9)
			j += 1;
		if (n == 7)
			return -1;
		st[ST_TOKENS + 2 * n] = start;
		st[ST_TOKENS + 2 * n + 1] = j;
		n += 1;
	}
	return n;
}

static int _field(const uint8_t *buf, const int64_t *st, int64_t t, uint64_t lo, uint64_t hi,
		  uint64_t *value)
{
	return _number(buf, st[ST_TOKENS + 2 * t], st[ST_TOKENS + 2 * t + 1], lo, hi, value);
}

static void _put_i64(unsigned char *row, int64_t off, int64_t v)
{
	memcpy(row + off, &v, sizeof(v));
}

/* Parse one non-empty line into row; 1 if a row was written, 0 for cpus, -1 if refused. */
static int64_t _line(const uint8_t *buf, int64_t *st, int64_t ntok, int64_t line,
		     unsigned char *row)
{
	int64_t w0 = -1, last, nargs;
	int nested, irq = 0, kmem_word = 0;
	int32_t cpu32;
	uint64_t zero = 0, kmem = 0;

	for (int64_t w = 0; w < W_NODES + 1; w++)
		if ((w <= W_CPUS || w == W_NODES)
		    && _is_word(buf, st[ST_TOKENS], st[ST_TOKENS + 1], w))
			w0 = w;
	if (w0 == W_CPUS) {
		uint64_t v;

		if (st[ST_CPUS_SEEN] || st[ST_ROWS] || ntok != 2)
			return -1;
		if (!_field(buf, st, 1, 1, MAX_CPUS, &v))
			return -1;
		st[ST_CPUS_SEEN] = 1;
		st[ST_CPUS] = (int64_t)v;
		st[ST_CPUS_LINE] = line;
		st[ST_NODES] = 1;
		return 0;
	}
	if (w0 == W_NODES) {
		uint64_t v;

		if (!st[ST_CPUS_SEEN] || st[ST_NODES_SEEN] || st[ST_ROWS] || ntok != 2)
			return -1;
		if (!_field(buf, st, 1, 1, MAX_NODES, &v) || (int64_t)v > st[ST_CPUS]
		    || floor_mod(st[ST_CPUS], (int64_t)v))
			return -1;
		st[ST_NODES_SEEN] = 1;
		st[ST_NODES] = (int64_t)v;
		return 0;
	}
	if (w0 < 0 || !st[ST_CPUS_SEEN])
		return -1;
	last = st[ST_TOKENS + 2 * (ntok - 1)];
	nested = ntok > 1 && _is_word(buf, last, st[ST_TOKENS + 2 * ntok - 1], W_NESTED);
	nargs = ntok - 1 - (nested ? 1 : 0);
	if (nargs > 0) {
		int64_t t = nargs;	/* the token before nested, if any */

		irq = _is_word(buf, st[ST_TOKENS + 2 * t], st[ST_TOKENS + 2 * t + 1], W_IRQ);
	}
	if (irq) {
		if (!(w0 == OP_CHARGE || w0 == OP_UNCHARGE || w0 == OP_UNCHARGE_DIRECT
		      || w0 == OP_OBJ_CHARGE || w0 == OP_OBJ_UNCHARGE))
			return -1;
		nargs -= 1;
	}
	if (nargs > 3 && (w0 == OP_CHARGE || w0 == OP_UNCHARGE || w0 == OP_UNCHARGE_DIRECT)) {
		/* the kmem word right after NR: bare on charge and uncharge, kmem=K direct */
		int64_t ks = st[ST_TOKENS + 2 * nargs], ke = st[ST_TOKENS + 2 * nargs + 1];

		if (w0 != OP_UNCHARGE_DIRECT && _is_word(buf, ks, ke, W_KMEM)) {
			kmem_word = 1;
			nargs -= 1;
		} else if (w0 == OP_UNCHARGE_DIRECT
			   && _is_word(buf, ks, min64(ks + 5, ke), W_KMEMEQ)) {
			if (!_number(buf, ks + 5, ke, 0, NR_MAX, &kmem))
				return -1;
			nargs -= 1;
		}
	}
	row[OPF_OP] = (unsigned char)w0;
	row[OPF_NESTED] = (unsigned char)nested;
	row[OPF_IRQ] = (unsigned char)irq;
	cpu32 = -1;
	memcpy(row + OPF_CPU, &cpu32, sizeof(cpu32));
	_put_i64(row, OPF_MEMCG, 0);
	_put_i64(row, OPF_PARENT, -1);
	memcpy(row + OPF_ARG, &zero, sizeof(zero));
	_put_i64(row, OPF_LINE, line);
	memcpy(row + OPF_KMEM, &zero, sizeof(zero));
	if (w0 == OP_CGROUP) {
		uint64_t ident, par, limit = PAGE_COUNTER_MAX;
		int ok1, ok2, ok3 = 1;

		if (nargs != 2 && nargs != 3)
			return -1;
		ok1 = _field(buf, st, 1, 1, MEMCG_ID_MAX, &ident);
		ok2 = _field(buf, st, 2, 0, MEMCG_ID_MAX, &par);
		if (nargs == 3) {
			int64_t s3 = st[ST_TOKENS + 6];

			ok3 = _is_word(buf, s3, min64(s3 + 4, st[ST_TOKENS + 7]), W_MAX);
			if (ok3)
				ok3 = _number(buf, s3 + 4, st[ST_TOKENS + 7], 1, PAGES_MAX, &limit);
		}
		if (!(ok1 && ok2 && ok3))
			return -1;
		_put_i64(row, OPF_MEMCG, (int64_t)ident);
		_put_i64(row, OPF_PARENT, (int64_t)par);
		memcpy(row + OPF_ARG, &limit, sizeof(limit));
	} else if (w0 == OP_CHARGE || w0 == OP_UNCHARGE || w0 == OP_UNCHARGE_DIRECT
		   || w0 == OP_OBJ_CHARGE || w0 == OP_OBJ_UNCHARGE) {
		/*
		 * the page operations take nr_pages, the object ones a byte count; the fields
		 * are read only when the line has them (the numba code read stale token
		 * bounds, harmlessly, when it had not: same results)
		 */
		uint64_t hi = (w0 == OP_OBJ_CHARGE || w0 == OP_OBJ_UNCHARGE) ? OBJ_BYTES_MAX : NR_MAX;
		uint64_t c, m, nr;

		if (nargs != 3 || !(_field(buf, st, 1, 0, MAX_CPUS - 1, &c)
				    && _field(buf, st, 2, 0, MEMCG_ID_MAX, &m)
				    && _field(buf, st, 3, 1, hi, &nr)))
			return -1;
		cpu32 = (int32_t)c;
		memcpy(row + OPF_CPU, &cpu32, sizeof(cpu32));
		_put_i64(row, OPF_MEMCG, (int64_t)m);
		memcpy(row + OPF_ARG, &nr, sizeof(nr));
		if (kmem_word)
			kmem = nr;	/* the bare word: all NR pages are kmem pages */
		memcpy(row + OPF_KMEM, &kmem, sizeof(kmem));
	} else if (w0 == OP_DRAIN_ALL) {
		uint64_t c, m;

		if (nargs != 2 || !(_field(buf, st, 1, 0, MAX_CPUS - 1, &c)
				    && _field(buf, st, 2, 0, MEMCG_ID_MAX, &m)))
			return -1;
		cpu32 = (int32_t)c;
		memcpy(row + OPF_CPU, &cpu32, sizeof(cpu32));
		_put_i64(row, OPF_MEMCG, (int64_t)m);
	} else if (w0 == OP_CPU_DEAD) {
		uint64_t c;

		if (nargs != 1 || !_field(buf, st, 1, 0, MAX_CPUS - 1, &c))
			return -1;
		cpu32 = (int32_t)c;
		memcpy(row + OPF_CPU, &cpu32, sizeof(cpu32));
	} else if (w0 == OP_SET_MAX) {
		uint64_t m, pages;

		if (nargs != 2 || !(_field(buf, st, 1, 0, MEMCG_ID_MAX, &m)
				    && _field(buf, st, 2, 1, PAGES_MAX, &pages)))
			return -1;
		_put_i64(row, OPF_MEMCG, (int64_t)m);
		memcpy(row + OPF_ARG, &pages, sizeof(pages));
	} else if (w0 == OP_OFFLINE) {
		uint64_t m;

		if (nargs != 1 || !_field(buf, st, 1, 0, MEMCG_ID_MAX, &m))
			return -1;
		_put_i64(row, OPF_MEMCG, (int64_t)m);
	}
	return 1;
}

/*
 * Scan lines from buf[pos:end] (line is the number of the line before pos) into the
 * out_n rows at out, stride bytes apart.
 *
 * Stops at the end of the buffer (without final, before a last line that has no
 * newline yet), when out is full, or at a refused line (st[ST_BAD_LINE] is then set).
 * Returns the rows written; res gets the position reached and the last line number.
 */
int64_t scan(const uint8_t *buf, int64_t end, int64_t pos, int64_t line, int final,
	     int64_t *st, unsigned char *out, int64_t out_n, int64_t stride, int64_t *res)
{
	int64_t n = 0;

	while (pos < end && n < out_n) {
		int64_t le = pos, ls, ce, j, ntok, got;

		while (le < end && buf[le] != 10)
			le += 1;
		if (le == end && !final)
			break;
		ls = pos;
		pos = le + 1;
		line += 1;
		ce = le;
		if (ce > ls && buf[ce - 1] == 13)
			ce -= 1;
		j = ls;
		while (j < ce && buf[j] != 35)
			j += 1;
		ntok = _tokens(buf, ls, j, st);
		if (ntok == 0)
			continue;
		got = ntok < 0 ? -1 : _line(buf, st, ntok, line, out + n * stride);
		if (got < 0) {
			st[ST_BAD_LINE] = line;
			st[ST_BAD_START] = ls;
			st[ST_BAD_END] = le;
			res[0] = min64(pos, end);
			res[1] = line;
			return n;
		}
		n += got;
		st[ST_ROWS] += got;
	}
	res[0] = min64(pos, end);
	res[1] = line;
	return n;
}
