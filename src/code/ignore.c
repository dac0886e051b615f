#include "code/ignore.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"

/*
 * A compiled pattern is a literal prefix plus one token per remaining pattern
 * element. Star runs are resolved at compile time into what git's wildmatch
 * decides while matching: whether the run may cross '/' (a `**` standing
 * between slashes or at an end) and what follows it.
 */
enum {
	T_LIT,          /* one byte, ch */
	T_ANY,          /* `?`: any byte but '/' */
	T_CLASS,        /* classes[cls], '/' never included */
	T_STAR,         /* `*` followed by more pattern, no '/' crossing */
	T_STAR_END,     /* trailing `*`: the rest has no '/' */
	T_STAR_SLASH,   /* star then slash: jump to the next slash, consumed */
	T_DSTAR,        /* `**` followed by `\/`: crosses '/' */
	T_DSTAR_END,    /* trailing `**`: anything */
	T_DSTAR_SKIP,   /* double star then slash: zero or more directories */
};

struct aj_ignore_tok {
	unsigned char op;
	unsigned char ch;
	unsigned short cls;
};

/* wildmatch results; the aborts prune the backtracking. */
enum { WM_MATCH = 0, WM_NOMATCH = 1, WM_ABORT_ALL = -1, WM_ABORT_TO_STARSTAR = -2 };

static const char builtin_rules[] =
	".git\n"
	".venv\n"
	"node_modules\n"
	"__pycache__\n"
	/*
	 * Not "/.azure_jobs/": an excluded directory is never entered, so
	 * scripts/ could not come back. Exclude its entries instead.
	 */
	"/.azure_jobs/*\n"
	"!/.azure_jobs/scripts/\n";

void aj_ignore_init(struct aj_ignore *ig)
{
	memset(ig, 0, sizeof(*ig));
	aj_strlist_init(&ig->sources);
}

static void rule_release(struct aj_ignore_rule *r)
{
	aj_free(r->text);
	aj_free(r->prefix);
	aj_free(r->suffix);
	aj_free(r->must);
	aj_free(r->toks);
	aj_free(r->classes);
	memset(r, 0, sizeof(*r));
}

void aj_ignore_release(struct aj_ignore *ig)
{
	size_t i;

	for (i = 0; i < ig->nr; i++)
		rule_release(&ig->rules[i]);
	aj_free(ig->rules);
	aj_strlist_release(&ig->sources);
	aj_free(ig->last_byte);
	aj_free(ig->dir_only_mask);
	aj_ignore_init(ig);
}

int aj_ignore_excludes(const struct aj_ignore_rule *r)
{
	return r && !r->negate;
}

int aj_ignore_rule_origin(const struct aj_ignore_rule *r, struct aj_buf *out)
{
	if (r->in_list)
		return aj_buf_addf(out, "%s[%d]", r->source, r->line - 1);
	if (!strcmp(r->source, "built-in"))
		return aj_buf_addstr(out, r->source);
	return aj_buf_addf(out, "%s:%d", r->source, r->line);
}

/* ---- compiling ---- */

struct compiler {
	const char *p;
	size_t n;
	struct aj_ignore_rule *r;
	size_t toks_alloc;
	size_t nr_classes;
	size_t classes_alloc;
	const char *error;   /* static message for a malformed pattern */
};

static void class_set(uint64_t *bits, unsigned c)
{
	bits[c >> 6] |= (uint64_t)1 << (c & 63);
}

static int class_has(const uint64_t *bits, unsigned char c)
{
	return (int)((bits[c >> 6] >> (c & 63)) & 1);
}

static int emit(struct compiler *c, unsigned char op, unsigned char ch,
		unsigned short cls)
{
	struct aj_ignore_rule *r = c->r;

	if (AJ_GROW(r->toks, r->nr_toks + 1, c->toks_alloc))
		return -1;
	r->toks[r->nr_toks].op = op;
	r->toks[r->nr_toks].ch = ch;
	r->toks[r->nr_toks].cls = cls;
	r->nr_toks++;
	return 0;
}

/* Class names accepted inside brackets, with git's ASCII definitions. */
static int named_class(const char *s, size_t len, uint64_t *bits)
{
	static const char *const names[] = {
		"alnum", "alpha", "blank", "cntrl", "digit", "graph",
		"lower", "print", "punct", "space", "upper", "xdigit",
	};
	size_t k;
	unsigned c;
	int which = -1;

	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (strlen(names[k]) == len && !memcmp(names[k], s, len))
			which = (int)k;
	if (which < 0)
		return -1;
	for (c = 0; c < 128; c++) {
		int digit = c >= '0' && c <= '9';
		int lower = c >= 'a' && c <= 'z';
		int upper = c >= 'A' && c <= 'Z';
		int graph = c > 32 && c < 127;
		int in;

		switch (which) {
		case 0: in = digit || lower || upper; break;
		case 1: in = lower || upper; break;
		case 2: in = c == ' ' || c == '\t'; break;
		case 3: in = c < 32 || c == 127; break;
		case 4: in = digit; break;
		case 5: in = graph; break;
		case 6: in = lower; break;
		case 7: in = graph || c == ' '; break;
		case 8: in = graph && !(digit || lower || upper); break;
		/* git's isspace: no \v, no \f */
		case 9: in = c == ' ' || c == '\t' || c == '\n' || c == '\r'; break;
		case 10: in = upper; break;
		default:
			in = digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
			break;
		}
		if (in)
			class_set(bits, c);
	}
	return 0;
}

/*
 * Parse the bracket expression starting at c->p[*i] == '[' the way git's
 * wildmatch reads it: a leading `!` or `^` negates, the first member may be
 * `]`, `\` escapes, `a-z` ranges, `[:name:]` classes. Leaves *i after `]`.
 */
static int compile_class(struct compiler *c, size_t *i)
{
	const char *p = c->p;
	size_t n = c->n, k = *i + 1;
	uint64_t bits[4] = { 0, 0, 0, 0 };
	unsigned char ch, prev = 0;
	int negated = 0;
	size_t w;
	struct aj_ignore_rule *r = c->r;

	if (k >= n)
		goto unclosed;
	ch = (unsigned char)p[k];
	if (ch == '!' || ch == '^') {
		negated = 1;
		if (++k >= n)
			goto unclosed;
		ch = (unsigned char)p[k];
	}
	for (;;) {
		if (ch == '\\') {
			if (++k >= n)
				goto unclosed;
			ch = (unsigned char)p[k];
			class_set(bits, ch);
		} else if (ch == '-' && prev && k + 1 < n && p[k + 1] != ']') {
			unsigned lo = prev, hi, x;

			ch = (unsigned char)p[++k];
			if (ch == '\\') {
				if (++k >= n)
					goto unclosed;
				ch = (unsigned char)p[k];
			}
			hi = ch;
			for (x = lo; x <= hi; x++)
				class_set(bits, x);
			ch = 0;
		} else if (ch == '[' && k + 1 < n && p[k + 1] == ':') {
			size_t s = k + 2, q = s;

			while (q < n && p[q] != ']')
				q++;
			if (q >= n)
				goto unclosed;
			if (q == s || p[q - 1] != ':') {
				/* No ":]": the '[' is an ordinary member. */
				class_set(bits, '[');
				ch = '[';
			} else {
				if (named_class(p + s, q - s - 1, bits)) {
					c->error = "unknown character class in pattern";
					return -1;
				}
				k = q;
				ch = 0;
			}
		} else {
			class_set(bits, ch);
		}
		prev = ch;
		if (++k >= n)
			goto unclosed;
		ch = (unsigned char)p[k];
		if (ch == ']')
			break;
	}
	*i = k + 1;
	if (negated)
		for (w = 0; w < 4; w++)
			bits[w] = ~bits[w];
	bits[0] &= ~((uint64_t)1 << '/');
	bits[0] &= ~(uint64_t)1;
	if (AJ_GROW(r->classes, c->nr_classes + 1, c->classes_alloc))
		return -1;
	memcpy(r->classes[c->nr_classes], bits, sizeof(bits));
	return emit(c, T_CLASS, 0, (unsigned short)c->nr_classes++);
unclosed:
	c->error = "unclosed character class in pattern";
	return -1;
}

/*
 * Compile p[0..n) (what follows the literal prefix). Like git, a `**` counts
 * as "between slashes" relative to this start, not the whole pattern.
 */
static int compile_tokens(struct compiler *c)
{
	const char *p = c->p;
	size_t n = c->n, i = 0;

	while (i < n) {
		unsigned char ch = (unsigned char)p[i];

		if (ch == '\\') {
			if (i + 1 >= n) {
				c->error = "pattern ends with a lone backslash";
				return -1;
			}
			if (emit(c, T_LIT, (unsigned char)p[i + 1], 0))
				return -1;
			i += 2;
		} else if (ch == '?') {
			if (emit(c, T_ANY, 0, 0))
				return -1;
			i++;
		} else if (ch == '[') {
			if (compile_class(c, &i))
				return -1;
		} else if (ch == '*') {
			size_t j = i + 1;
			int cross = 0;
			unsigned char op;

			if (j < n && p[j] == '*') {
				while (j < n && p[j] == '*')
					j++;
				cross = (i == 0 || p[i - 1] == '/') &&
					(j == n || p[j] == '/' ||
					 (p[j] == '\\' && j + 1 < n && p[j + 1] == '/'));
			}
			if (j == n)
				op = cross ? T_DSTAR_END : T_STAR_END;
			else if (cross)
				op = p[j] == '/' ? T_DSTAR_SKIP : T_DSTAR;
			else if (p[j] == '/')
				op = T_STAR_SLASH, j++;
			else
				op = T_STAR;
			if (emit(c, op, 0, 0))
				return -1;
			i = j;
		} else {
			if (emit(c, T_LIT, ch, 0))
				return -1;
			i++;
		}
	}
	return 0;
}

static int set_suffix(struct aj_ignore_rule *r)
{
	size_t i;

	if (r->nr_toks < 1 || r->toks[0].op != T_STAR)
		return 0;
	for (i = 1; i < r->nr_toks; i++)
		if (r->toks[i].op != T_LIT)
			return 0;
	r->suffix_len = r->nr_toks - 1;
	r->suffix = aj_malloc(r->suffix_len + 1);
	if (!r->suffix)
		return -1;
	for (i = 1; i < r->nr_toks; i++)
		r->suffix[i - 1] = (char)r->toks[i].ch;
	r->suffix[r->suffix_len] = '\0';
	return 0;
}

/*
 * The longest run of literal tokens: a match consumes it as consecutive
 * bytes, except the slash after a double star and slash, which may be
 * skipped.
 */
static int set_must(struct aj_ignore_rule *r)
{
	size_t i, start = 0, len = 0, from = 0;

	for (i = 0; i <= r->nr_toks; i++) {
		int lit = i < r->nr_toks && r->toks[i].op == T_LIT &&
			!(i > 0 && r->toks[i - 1].op == T_DSTAR_SKIP);

		if (lit) {
			if (!len || start + len != i)
				start = i, len = 0;
			len++;
			if (len > r->must_len) {
				from = start;
				r->must_len = len;
			}
		} else {
			len = 0;
		}
	}
	if (r->must_len < 2) {
		r->must_len = 0;
		return 0;
	}
	r->must = aj_malloc(r->must_len);
	if (!r->must)
		return -1;
	for (i = 0; i < r->must_len; i++)
		r->must[i] = (char)r->toks[from + i].ch;
	return 0;
}

/* Which last bytes of a path the rule can match (bits over 256 bytes). */
static void last_bytes(const struct aj_ignore_rule *r, uint64_t *bits)
{
	const struct aj_ignore_tok *t;
	unsigned c;

	memset(bits, 0, 4 * sizeof(*bits));
	if (!r->nr_toks) {
		if (r->prefix_len)
			class_set(bits, (unsigned char)r->prefix[r->prefix_len - 1]);
		return;
	}
	t = &r->toks[r->nr_toks - 1];
	if (t->op == T_LIT) {
		class_set(bits, t->ch);
	} else if (t->op == T_CLASS) {
		memcpy(bits, r->classes[t->cls], 4 * sizeof(*bits));
	} else {
		for (c = 1; c < 256; c++)
			if (c != '/')
				class_set(bits, c);
	}
}

static int prefilter_add(struct aj_ignore *ig, size_t idx)
{
	const struct aj_ignore_rule *r = &ig->rules[idx];
	size_t w = idx / 64;
	uint64_t bit = (uint64_t)1 << (idx % 64), bits[4];
	unsigned c;

	if (w >= ig->words) {
		uint64_t *lb = aj_realloc(ig->last_byte, (w + 1) * 256 * sizeof(*lb));
		uint64_t *dm;

		if (!lb)
			return -1;
		ig->last_byte = lb;
		dm = aj_realloc(ig->dir_only_mask, (w + 1) * sizeof(*dm));
		if (!dm)
			return -1;
		ig->dir_only_mask = dm;
		memset(lb + ig->words * 256, 0, (w + 1 - ig->words) * 256 * sizeof(*lb));
		memset(dm + ig->words, 0, (w + 1 - ig->words) * sizeof(*dm));
		ig->words = w + 1;
	}
	last_bytes(r, bits);
	for (c = 0; c < 256; c++)
		if (class_has(bits, (unsigned char)c))
			ig->last_byte[w * 256 + c] |= bit;
	if (r->dir_only)
		ig->dir_only_mask[w] |= bit;
	return 0;
}

/* git's trailing-space rule: drop unescaped trailing spaces. */
static size_t trim_trailing_spaces(const char *s, size_t len)
{
	size_t i, last_space = len;

	for (i = 0; i < len; i++) {
		if (s[i] == ' ') {
			if (last_space == len)
				last_space = i;
		} else if (s[i] == '\\') {
			if (++i >= len)
				return len;
			last_space = len;
		} else {
			last_space = len;
		}
	}
	return last_space;
}

static const char *source_name(struct aj_ignore *ig, const char *source)
{
	long k = aj_strlist_find(&ig->sources, source);

	if (k >= 0)
		return ig->sources.items[k];
	if (aj_strlist_add(&ig->sources, source))
		return NULL;
	return ig->sources.items[ig->sources.nr - 1];
}

static int rule_error(struct aj_errors *e, const char *source, int lineno,
		      int in_list, const char *msg, const char *text, size_t len)
{
	struct aj_where w = { NULL, 0, 0, NULL };
	char key[256];

	if (in_list) {
		snprintf(key, sizeof(key), "%s[%d]", source, lineno - 1);
		w.path = key;
	} else {
		w.file = source;
		w.line = lineno;
	}
	if (len > 80)
		return aj_errors_add(e, &w, "%s \"%.80s...\"", msg, text);
	return aj_errors_add(e, &w, "%s \"%.*s\"", msg, (int)len, text);
}

static int add_pattern(struct aj_ignore *ig, const char *line, size_t len,
		       const char *source, int lineno, int in_list,
		       struct aj_errors *e)
{
	struct aj_ignore_rule r;
	struct compiler c;
	const char *p;
	size_t n, simple;

	if (!len || line[0] == '#')
		return 0;
	if (memchr(line, '\n', len) || memchr(line, '\0', len))
		return rule_error(e, source, lineno, in_list,
				  "line break or NUL byte in pattern", line,
				  strnlen(line, len));
	if (len > AJ_IGNORE_PATTERN_MAX)
		return rule_error(e, source, lineno, in_list,
				  "pattern longer than 4096 bytes:", line, len);
	len = trim_trailing_spaces(line, len);
	memset(&r, 0, sizeof(r));
	p = line;
	n = len;
	if (n && p[0] == '!') {
		r.negate = 1;
		p++;
		n--;
	}
	if (n && p[n - 1] == '/') {
		r.dir_only = 1;
		n--;
	}
	if (!n)
		return 0;   /* "!", "/": git keeps them but they match nothing */
	r.basename = memchr(p, '/', n) == NULL;
	if (!r.basename && p[0] == '/') {
		p++;
		n--;
	}
	for (simple = 0; simple < n && !strchr("*?[\\", p[simple]); simple++)
		;

	memset(&c, 0, sizeof(c));
	c.p = p + simple;
	c.n = n - simple;
	c.r = &r;
	if (AJ_GROW(ig->rules, ig->nr + 1, ig->alloc))
		goto oom;
	r.source = source_name(ig, source);
	r.text = aj_strndup(line, len);
	r.prefix = aj_strndup(p, simple);
	if (!r.source || !r.text || !r.prefix)
		goto oom;
	r.prefix_len = simple;
	r.line = lineno;
	r.in_list = in_list;
	if (compile_tokens(&c)) {
		if (!c.error)
			goto oom;
		rule_release(&r);
		return rule_error(e, source, lineno, in_list, c.error, line, len);
	}
	if (set_suffix(&r) || (!r.suffix && set_must(&r)))
		goto oom;
	ig->rules[ig->nr] = r;
	if (prefilter_add(ig, ig->nr)) {
		memset(&ig->rules[ig->nr], 0, sizeof(r));
		goto oom;
	}
	ig->nr++;
	return 0;
oom:
	rule_release(&r);
	return aj_errors_oom(e);
}

int aj_ignore_add_line(struct aj_ignore *ig, const char *line, size_t len,
		       const char *source, int lineno, struct aj_errors *e)
{
	return add_pattern(ig, line, len, source, lineno, 0, e);
}

int aj_ignore_add_text(struct aj_ignore *ig, const char *text, size_t len,
		       const char *source, struct aj_errors *e)
{
	size_t start = 0, i;
	int lineno = 1;

	if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
		start = 3;
	while (start < len) {
		size_t end;

		for (i = start; i < len && text[i] != '\n'; i++)
			;
		end = i;
		if (end > start && text[end - 1] == '\r')
			end--;
		if (add_pattern(ig, text + start, end - start, source, lineno, 0, e))
			return -1;
		lineno++;
		start = i + 1;
	}
	return 0;
}

int aj_ignore_add_builtins(struct aj_ignore *ig, struct aj_errors *e)
{
	return aj_ignore_add_text(ig, builtin_rules, sizeof(builtin_rules) - 1,
				  "built-in", e);
}

int aj_ignore_add_list(struct aj_ignore *ig, const struct aj_strlist *list,
		       const char *source, struct aj_errors *e)
{
	size_t i;

	for (i = 0; i < list->nr; i++)
		if (add_pattern(ig, list->items[i], strlen(list->items[i]),
				source, (int)i + 1, 1, e))
			return -1;
	return 0;
}

static int read_small_file(int fd, const char *name, char **out, size_t *len,
			   struct aj_errors *e)
{
	struct aj_where w = { name, 0, 0, NULL };
	struct stat st;
	size_t got = 0;
	char *data;

	if (fstat(fd, &st))
		return aj_errors_add(e, &w, "cannot stat: %s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return aj_errors_add(e, &w, "not a regular file");
	if (st.st_size > (off_t)AJ_IGNORE_FILE_MAX)
		return aj_errors_add(e, &w, "larger than %u bytes",
				     AJ_IGNORE_FILE_MAX);
	data = aj_malloc((size_t)st.st_size + 1);
	if (!data)
		return aj_errors_oom(e);
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, data + got, (size_t)st.st_size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			aj_free(data);
			if (r == 0)
				return aj_errors_add(e, &w, "file shrank while reading");
			return aj_errors_add(e, &w, "cannot read: %s", strerror(errno));
		}
		got += (size_t)r;
	}
	*out = data;
	*len = got;
	return 0;
}

int aj_ignore_add_root_file(struct aj_ignore *ig, const char *root,
			    struct aj_errors *e)
{
	static const char *const names[] = { ".codeignore", ".amltignore" };
	size_t k;

	for (k = 0; k < 2; k++) {
		struct aj_buf path = AJ_BUF_INIT(AJ_BUF_SMALL);
		char *data = NULL;
		size_t len = 0;
		struct stat st;
		int fd, ret;

		if (aj_buf_addf(&path, "%s/%s", root, names[k]))
			return aj_errors_oom(e);
		fd = open(aj_buf_cstr(&path), O_RDONLY | O_CLOEXEC);
		/* A dangling symlink is present, and an error. */
		if (fd < 0 && errno == ENOENT && lstat(aj_buf_cstr(&path), &st)) {
			aj_buf_release(&path);
			continue;
		}
		aj_buf_release(&path);
		if (fd < 0) {
			struct aj_where w = { names[k], 0, 0, NULL };

			return aj_errors_add(e, &w, "cannot open: %s", strerror(errno));
		}
		ret = read_small_file(fd, names[k], &data, &len, e);
		close(fd);
		if (!ret)
			ret = aj_ignore_add_text(ig, data, len, names[k], e);
		aj_free(data);
		return ret;
	}
	return 0;
}

int aj_ignore_setup(struct aj_ignore *ig, const char *root,
		    const struct aj_strlist *template_ignore, struct aj_errors *e)
{
	if (aj_ignore_add_builtins(ig, e))
		return -1;
	if (template_ignore && aj_ignore_add_list(ig, template_ignore, "code.ignore", e))
		return -1;
	return aj_ignore_add_root_file(ig, root, e);
}

/* ---- matching ---- */

static int is_star(unsigned char op)
{
	return op >= T_STAR;
}

/* git's dowild() over compiled tokens and a length-delimited text. */
static int wild(const struct aj_ignore_rule *r, size_t ti,
		const unsigned char *t, const unsigned char *end)
{
	for (; ti < r->nr_toks; ti++, t++) {
		const struct aj_ignore_tok *k = &r->toks[ti];
		const struct aj_ignore_tok *next;
		int cross;

		if (t == end && !is_star(k->op))
			return WM_ABORT_ALL;
		switch (k->op) {
		case T_LIT:
			if (*t != k->ch)
				return WM_NOMATCH;
			continue;
		case T_ANY:
			if (*t == '/')
				return WM_NOMATCH;
			continue;
		case T_CLASS:
			if (!class_has(r->classes[k->cls], *t))
				return WM_NOMATCH;
			continue;
		case T_STAR_END:
			return memchr(t, '/', (size_t)(end - t)) ? WM_NOMATCH : WM_MATCH;
		case T_DSTAR_END:
			return WM_MATCH;
		case T_STAR_SLASH:
			t = memchr(t, '/', (size_t)(end - t));
			if (!t)
				return WM_NOMATCH;
			continue;   /* the loop steps over the '/' */
		default:
			break;
		}
		/* A star with more pattern after it. */
		cross = k->op != T_STAR;
		if (k->op == T_DSTAR_SKIP && wild(r, ti + 2, t, end) == WM_MATCH)
			return WM_MATCH;
		next = &r->toks[++ti];
		for (; t < end; t++) {
			int m;

			if (next->op == T_LIT) {
				/*
				 * What the star eats ends before the next literal.
				 * Not found: say why, as stepping one byte at a time
				 * would (git's shortcut answers "no match" here,
				 * which lets every outer star retry: exponential
				 * time for patterns like `*a*a*a...*b`).
				 */
				while (t < end && *t != next->ch && (cross || *t != '/'))
					t++;
				if (t == end)
					return WM_ABORT_ALL;
				if (*t != next->ch)
					return WM_ABORT_TO_STARSTAR;   /* a '/' it may not cross */
			}
			m = wild(r, ti, t, end);
			if (m != WM_NOMATCH) {
				if (!cross || m != WM_ABORT_TO_STARSTAR)
					return m;
			} else if (!cross && *t == '/') {
				return WM_ABORT_TO_STARSTAR;
			}
		}
		return WM_ABORT_ALL;
	}
	return t == end ? WM_MATCH : WM_NOMATCH;
}

/* Whether s[0..n) contains m[0..mlen) (mlen >= 1); short texts, no setup. */
static int contains(const unsigned char *s, size_t n, const char *m, size_t mlen)
{
	const unsigned char *p = s, *last;

	if (n < mlen)
		return 0;
	last = s + (n - mlen);
	while (p <= last && (p = memchr(p, (unsigned char)m[0], (size_t)(last - p) + 1))) {
		if (!memcmp(p + 1, m + 1, mlen - 1))
			return 1;
		p++;
	}
	return 0;
}

/* path[0..len) with its last component starting at path + base. */
static int rule_matches(const struct aj_ignore_rule *r, const char *path,
			size_t len, size_t base)
{
	const unsigned char *name = (const unsigned char *)path + (r->basename ? base : 0);
	const unsigned char *end = (const unsigned char *)path + len;
	size_t n = (size_t)(end - name);

	if (n < r->prefix_len || memcmp(name, r->prefix, r->prefix_len))
		return 0;
	name += r->prefix_len;
	n -= r->prefix_len;
	if (!r->nr_toks)
		return n == 0;
	if (r->suffix) {
		if (n < r->suffix_len ||
		    memcmp(end - r->suffix_len, r->suffix, r->suffix_len))
			return 0;
		return !memchr(name, '/', n - r->suffix_len);
	}
	if (r->must_len && !contains(name, n, r->must, r->must_len))
		return 0;
	return wild(r, 0, name, end) == WM_MATCH;
}

static int highest_bit(uint64_t x)
{
	return 63 - __builtin_clzll(x);
}

const struct aj_ignore_rule *aj_ignore_match(const struct aj_ignore *ig,
					     const char *path, size_t len,
					     int is_dir)
{
	size_t w, base = len;
	unsigned char last;

	if (!len || !ig->words)
		return NULL;
	last = (unsigned char)path[len - 1];
	while (base > 0 && path[base - 1] != '/')
		base--;
	for (w = ig->words; w-- > 0;) {
		uint64_t cand = ig->last_byte[w * 256 + last];

		if (!is_dir)
			cand &= ~ig->dir_only_mask[w];
		while (cand) {
			int b = highest_bit(cand);
			const struct aj_ignore_rule *r = &ig->rules[w * 64 + (size_t)b];

			if (rule_matches(r, path, len, base))
				return r;
			cand &= ~((uint64_t)1 << b);
		}
	}
	return NULL;
}

const struct aj_ignore_rule *aj_ignore_check(const struct aj_ignore *ig,
					     const char *path, size_t len,
					     int is_dir)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (path[i] == '/') {
			const struct aj_ignore_rule *r = aj_ignore_match(ig, path, i, 1);

			if (aj_ignore_excludes(r))
				return r;
		}
	}
	return aj_ignore_match(ig, path, len, is_dir);
}
