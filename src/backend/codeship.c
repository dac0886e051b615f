/*
 * codeship.c - code into the pods of a cluster backend (codeship.h).
 */
#include "codeship.h"

#include <stdio.h>
#include <string.h>

#include "common.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/jobspec.h"
#include "core/node.h"
#include "core/schema.h"
#include "storage_secret.h"

#define STRATEGY_PATH "config._extra.code_upload.strategy"
#define STRATEGY_EXEC "kubectl-exec"
#define STRATEGY_BLOB "blob"
#define ENV_PATH "config.jobs[0].submit_args.env."
#define BLOB_PATH "config._extra.code_upload.blob"
#define UPLOAD_DIR_DEFAULT "aj-code"
#define SAS_DAYS_MAX 7
#define RETRIES_DEFAULT 5
#define RETRIES_MAX 100
#define AZCOPY_URL "https://aka.ms/downloadazcopy-v10-linux"

static const struct aj_schema_key upload_keys[] = {
	{ "strategy", AJ_SCHEMA_VALUE, STRATEGY_EXEC " or " STRATEGY_BLOB, "default " STRATEGY_EXEC },
	{ "blob", AJ_SCHEMA_KEYS, "mapping", "the blob strategy" },
	{ "blob.storage_account", AJ_SCHEMA_VALUE, "string", "storage account" },
	{ "blob.container", AJ_SCHEMA_VALUE, "string", "blob container" },
	{ "blob.upload_dir", AJ_SCHEMA_VALUE, "string",
	  "folder in the container (default " UPLOAD_DIR_DEFAULT ")" },
	{ "blob.sas_expiry_days", AJ_SCHEMA_VALUE, "integer 1-7", "lifetime of the read SAS (default 1)" },
	{ "blob.pod_download_retries", AJ_SCHEMA_VALUE, "integer 0-100",
	  "download retries in the pod (default 5)" },
};

const struct aj_schema aj_codeship_schema = {
	"_extra.code_upload", "mapping", "how code reaches the pods (kube, volcano)", upload_keys,
	sizeof(upload_keys) / sizeof(upload_keys[0])
};

static struct aj_where where(const char *path)
{
	struct aj_where w = { NULL, 0, 0, path };

	return w;
}

int aj_code_volume(const struct aj_jobspec *spec, struct aj_code_volume *v)
{
	const char *pvc = spec->jobs_nr ? aj_kvlist_get(&spec->jobs[0].env, AJ_PVC_NAME_VAR) : NULL;
	const char *dir = spec->jobs_nr ? aj_kvlist_get(&spec->jobs[0].env, AJ_PVC_DIR_VAR) : NULL;

	if (!pvc || !*pvc || !dir || !*dir)
		return 0;
	v->pvc = pvc;
	v->mount_dir = dir;
	return 1;
}

static const char *code_strategy(const struct aj_jobspec *spec)
{
	const struct aj_node *n = spec->extra && spec->extra->type == AJ_NODE_MAP ?
		aj_node_at(spec->extra, "code_upload.strategy") : NULL;

	return n && n->type == AJ_NODE_STRING ? n->str : NULL;
}

int aj_code_via_volume(const struct aj_jobspec *spec, struct aj_code_volume *v)
{
	const char *strategy = code_strategy(spec);

	return (!strategy || !strcmp(strategy, STRATEGY_EXEC)) && aj_code_volume(spec, v);
}

int aj_code_via_blob(const struct aj_jobspec *spec)
{
	const char *strategy = code_strategy(spec);

	return strategy && !strcmp(strategy, STRATEGY_BLOB);
}

int aj_sha256_hex(const char *s)
{
	size_t i;

	for (i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return !s[64];
}

int aj_codeship_check(const struct aj_jobspec *spec, struct aj_errors *err)
{
	const struct aj_node *strategy = spec->extra && spec->extra->type == AJ_NODE_MAP ?
		aj_node_at(spec->extra, "code_upload.strategy") : NULL;
	struct aj_code_volume v;
	int ret = 0;

	if (strategy && strategy->type != AJ_NODE_NULL &&
	    (strategy->type != AJ_NODE_STRING || (strcmp(strategy->str, STRATEGY_EXEC) &&
						  strcmp(strategy->str, STRATEGY_BLOB)))) {
		struct aj_where w;

		aj_node_where(strategy, STRATEGY_PATH, &w);
		ret = aj_errors_add(err, &w, "expected " STRATEGY_EXEC " or " STRATEGY_BLOB);
	}
	if (!aj_code_volume(spec, &v))
		return ret;
	if (!aj_dns_subdomain(v.pvc)) {
		struct aj_where w = where(ENV_PATH AJ_PVC_NAME_VAR);

		ret = aj_errors_add(err, &w, "\"%s\" is not a PersistentVolumeClaim name "
				    "(lowercase letters, digits, '-' and '.')", v.pvc);
	}
	if (v.mount_dir[0] != '/' || !v.mount_dir[strspn(v.mount_dir, "/")]) {
		struct aj_where w = where(ENV_PATH AJ_PVC_DIR_VAR);

		ret = aj_errors_add(err, &w, "\"%s\" must be an absolute path other than /",
				    v.mount_dir);
	} else if (aj_paths_overlap(v.mount_dir, AJ_SHM_PATH) || aj_paths_overlap(v.mount_dir, AJ_WORK_DIR)) {
		struct aj_where w = where(ENV_PATH AJ_PVC_DIR_VAR);

		ret = aj_errors_add(err, &w, "%s overlaps %s", v.mount_dir,
				    aj_paths_overlap(v.mount_dir, AJ_SHM_PATH) ?
				    "the shared-memory mount " AJ_SHM_PATH :
				    "the work directory " AJ_WORK_DIR);
	}
	return ret;
}

/* An optional integer under _extra.code_upload.blob, in [min, max]. */
static int blob_int(const struct aj_node *blob, const char *key, int min, int max, int *out,
		    struct aj_errors *err)
{
	const struct aj_node *n = aj_node_get(blob, key);
	char path[96];
	struct aj_where w;

	if (!n || n->type == AJ_NODE_NULL)
		return 0;
	if (n->type == AJ_NODE_INT && n->v.integer >= min && n->v.integer <= max) {
		*out = (int)n->v.integer;
		return 0;
	}
	snprintf(path, sizeof(path), BLOB_PATH ".%s", key);
	aj_node_where(n, path, &w);
	return aj_errors_add(err, &w, "expected an integer from %d to %d", min, max);
}

/* A string under _extra.code_upload.blob that `ok` accepts; required or not. */
static int blob_str(const struct aj_node *blob, const char *key, int required,
		    int (*ok)(const char *), const char *what, const char **out,
		    struct aj_errors *err)
{
	const struct aj_node *n = blob ? aj_node_get(blob, key) : NULL;
	char path[96];
	struct aj_where w;

	snprintf(path, sizeof(path), BLOB_PATH ".%s", key);
	if (!n || n->type == AJ_NODE_NULL) {
		w = where(path);
		return required ? aj_errors_add(err, &w, "required with strategy " STRATEGY_BLOB) : 0;
	}
	aj_node_where(n, path, &w);
	if (n->type != AJ_NODE_STRING)
		return aj_errors_add(err, &w, "expected a string");
	if (!ok(n->str))
		return aj_errors_add(err, &w, "\"%s\" is not %s", n->str, what);
	*out = n->str;
	return 0;
}

/* upload_dir: '/'-separated names of [A-Za-z0-9._-], none empty, "." or "..". */
static int upload_dir_name(const char *s)
{
	size_t n;

	if (strlen(s) > 512)
		return 0;
	for (;; s += n + 1) {
		n = strcspn(s, "/");
		if (!n || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.') ||
		    strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != n)
			return 0;
		if (!s[n])
			return 1;
	}
}

int aj_code_blob(const struct aj_jobspec *spec, struct aj_code_blob *b, struct aj_errors *err)
{
	const char *strategy = code_strategy(spec);
	const struct aj_node *blob;
	int ret = 0;

	memset(b, 0, sizeof(*b));
	if (!strategy || strcmp(strategy, STRATEGY_BLOB))
		return 0;
	b->upload_dir = UPLOAD_DIR_DEFAULT;
	b->sas_expiry_days = 1;
	b->pod_download_retries = RETRIES_DEFAULT;
	blob = aj_node_at(spec->extra, "code_upload.blob");
	if (blob && blob->type != AJ_NODE_MAP && blob->type != AJ_NODE_NULL) {
		struct aj_where w;

		aj_node_where(blob, BLOB_PATH, &w);
		return aj_errors_add(err, &w, "expected a mapping");
	}
	if (blob && blob->type == AJ_NODE_NULL)
		blob = NULL;
	if (blob_str(blob, "storage_account", 1, aj_storage_account_name,
		     "a storage account name (3-24 lowercase letters and digits)", &b->account, err))
		ret = -1;
	if (blob_str(blob, "container", 1, aj_storage_container_name,
		     "a container name (3-63 lowercase letters, digits and single '-')",
		     &b->container, err))
		ret = -1;
	if (blob_str(blob, "upload_dir", 0, upload_dir_name,
		     "a relative blob path of letters, digits, '.', '_', '-' and '/'",
		     &b->upload_dir, err))
		ret = -1;
	if (blob && (blob_int(blob, "sas_expiry_days", 1, SAS_DAYS_MAX, &b->sas_expiry_days, err) ||
		     blob_int(blob, "pod_download_retries", 0, RETRIES_MAX, &b->pod_download_retries,
			      err)))
		ret = -1;
	return ret ? -1 : 1;
}

int aj_code_blob_name(const struct aj_code_blob *b, const char *digest, struct aj_buf *out)
{
	return aj_buf_addf(out, "%s/%s.tar.gz", b->upload_dir, digest);
}

const char aj_code_check_script[] = "test -d \"$1/$2\"";

const char aj_code_receive_script[] =
	"set -e\n"
	"store=$1 want=$2 size=$3\n"
	"mkdir -p \"$store\"\n"
	"find \"$store\" -maxdepth 1 -name '.tmp-*' -mmin +1440 -exec rm -rf {} + 2>/dev/null || true\n"
	"tmp=$(mktemp -d \"$store/.tmp-$want.XXXXXX\")\n"
	"trap 'rm -rf \"$tmp\"' EXIT\n"
	"head -c \"$size\" >\"$tmp/archive\"\n"
	"got=$(sha256sum \"$tmp/archive\" | cut -d ' ' -f 1)\n"
	"if [ \"$got\" != \"$want\" ]; then\n"
	"  echo \"aj: digest mismatch: received $(wc -c <\"$tmp/archive\") of $size bytes"
	" with SHA-256 $got, expected $want\" >&2\n"
	"  exit 3\n"
	"fi\n"
	"mkdir \"$tmp/$want\"\n"
	"tar -xzf \"$tmp/archive\" -C \"$tmp/$want\"\n"
	"mv \"$tmp/$want\" \"$store/\" 2>/dev/null || test -d \"$store/$want\"\n";

cJSON *aj_code_helper_pod(const struct aj_jobspec *spec, const char *name, const char *ns)
{
	struct aj_code_volume v;
	cJSON *pod, *meta, *labels, *ps, *c, *cmd, *m, *sc, *vol, *tols;
	int oom = 0;

	if (!aj_code_volume(spec, &v) || !spec->environment.image)
		return NULL;
	pod = cJSON_CreateObject();
	if (!pod)
		return NULL;
	aj_body_add_string(pod, "apiVersion", "v1", &oom);
	aj_body_add_string(pod, "kind", "Pod", &oom);
	meta = aj_body_add_object(pod, "metadata", &oom);
	aj_body_add_string(meta, "name", name, &oom);
	if (ns)
		aj_body_add_string(meta, "namespace", ns, &oom);
	labels = aj_body_add_object(meta, "labels", &oom);
	aj_body_add_string(labels, "app.kubernetes.io/managed-by", "aj", &oom);
	aj_body_add_string(labels, "app.kubernetes.io/component", "code-upload", &oom);
	ps = aj_body_add_object(pod, "spec", &oom);
	aj_body_add_string(ps, "restartPolicy", "Never", &oom);
	aj_body_add_int(ps, "activeDeadlineSeconds", AJ_CODE_HELPER_DEADLINE, &oom);
	aj_body_add_int(ps, "terminationGracePeriodSeconds", 0, &oom);
	/* on the nodes the job's pods go to (their image is there), tolerated as they are */
	if (spec->target.node_selector.nr) {
		size_t i;

		aj_body_add_labels(aj_body_add_object(ps, "nodeSelector", &oom),
				   &spec->target.node_selector, &oom);
		tols = aj_body_add_array(ps, "tolerations", &oom);
		for (i = 0; i < spec->target.node_selector.nr; i++)
			aj_body_add_toleration(tols, spec->target.node_selector.items[i].key,
					       spec->target.node_selector.items[i].value, &oom);
	}
	c = aj_body_add_object(aj_body_add_array(ps, "containers", &oom), NULL, &oom);
	aj_body_add_string(c, "name", "upload", &oom);
	aj_body_add_string(c, "image", spec->environment.image, &oom);
	cmd = aj_body_add_array(c, "command", &oom);
	aj_body_add_string(cmd, NULL, "sleep", &oom);
	aj_body_add_string(cmd, NULL, "3600", &oom);
	m = aj_body_add_object(aj_body_add_array(c, "volumeMounts", &oom), NULL, &oom);
	aj_body_add_string(m, "name", "shared", &oom);
	aj_body_add_string(m, "mountPath", v.mount_dir, &oom);
	sc = aj_body_add_object(c, "securityContext", &oom);
	aj_body_add_bool(sc, "allowPrivilegeEscalation", 0, &oom);
	aj_body_add_string(aj_body_add_array(aj_body_add_object(sc, "capabilities", &oom), "drop", &oom),
			   NULL, "ALL", &oom);
	aj_body_add_string(aj_body_add_object(sc, "seccompProfile", &oom), "type", "RuntimeDefault",
			   &oom);
	vol = aj_body_add_object(aj_body_add_array(ps, "volumes", &oom), NULL, &oom);
	aj_body_add_string(vol, "name", "shared", &oom);
	aj_body_add_string(aj_body_add_object(vol, "persistentVolumeClaim", &oom), "claimName", v.pvc,
			   &oom);
	if (oom) {
		cJSON_Delete(pod);
		return NULL;
	}
	return pod;
}

/*
 * Copy the code from the shared volume into the work directory; a missing
 * upload stops the pod with a message rather than running without code.
 */
static int code_copy(struct aj_buf *b, const struct aj_code_volume *v, const char *digest)
{
	struct aj_buf src = AJ_BUF_INIT(AJ_BUF_SMALL), msg = AJ_BUF_INIT(AJ_BUF_SMALL);
	int ret;

	aj_buf_addf(&src, "%s/" AJ_CODE_STORE "/%s", v->mount_dir, digest);
	aj_buf_addf(&msg, "aj: code %s is not in volume %s at %s: upload it with aj code upload",
		    digest, v->pvc, aj_buf_cstr(&src));
	ret = src.failed || msg.failed ||
	      aj_buf_addstr(b, "test -d ") || aj_shell_quote(b, aj_buf_cstr(&src)) ||
	      aj_buf_addstr(b, " || { echo ") || aj_shell_quote(b, aj_buf_cstr(&msg)) ||
	      aj_buf_addstr(b, " >&2; exit 1; }\ncp -a ") ||
	      aj_buf_addstr(&src, "/.") || aj_shell_quote(b, aj_buf_cstr(&src)) ||
	      aj_buf_addstr(b, " " AJ_WORK_DIR "/\ncd " AJ_WORK_DIR "\n") ? -1 : 0;
	aj_buf_release(&src);
	aj_buf_release(&msg);
	return ret;
}

/*
 * The blob strategy: install azcopy (always, so the version is known),
 * download the archive with the read URL from the Secret, retrying, check
 * its SHA-256 against the digest the AjJob carries, unpack it into the work
 * directory. The URL is read from the file when used, never echoed.
 */
static int code_download(struct aj_buf *b, const struct aj_code_blob *blob, const char *digest)
{
	int tries = blob->pod_download_retries + 1;

	return aj_buf_addf(b,
		"aj_fetch() {\n"
		"  if command -v curl >/dev/null 2>&1; then curl -fsSL -o \"$2\" \"$1\"\n"
		"  else wget -q -O \"$2\" \"$1\"; fi\n"
		"}\n"
		"aj_retry() {\n"
		"  local what=$1 i\n"
		"  shift\n"
		"  for i in $(seq %d); do\n"
		"    \"$@\" && return 0\n"
		"    if [ \"$i\" -lt %d ]; then sleep $((i * 5)); fi\n"
		"  done\n"
		"  echo \"aj: $what failed after %d attempts\" >&2\n"
		"  return 1\n"
		"}\n"
		"aj_dl=$(mktemp -d)\n"
		"case $(uname -m) in\n"
		"  aarch64|arm64) aj_azcopy=" AZCOPY_URL "-arm64 ;;\n"
		"  *) aj_azcopy=" AZCOPY_URL " ;;\n"
		"esac\n"
		"aj_retry 'installing azcopy' aj_fetch \"$aj_azcopy\" \"$aj_dl/azcopy.tgz\"\n"
		"tar -xzf \"$aj_dl/azcopy.tgz\" -C \"$aj_dl\" --strip-components=1 --wildcards '*/azcopy'\n"
		"export AZCOPY_LOG_LOCATION=\"$aj_dl\" AZCOPY_JOB_PLAN_LOCATION=\"$aj_dl\"\n"
		"aj_retry 'downloading the code' \"$aj_dl/azcopy\" copy "
		"\"$(cat " AJ_STORAGE_SECRET_DIR "/" AJ_CODE_URL_KEY ")\" \"$aj_dl/code.tar.gz\" "
		"--output-level=essential --log-level=ERROR\n"
		"unset AZCOPY_LOG_LOCATION AZCOPY_JOB_PLAN_LOCATION\n"
		"aj_got=$(sha256sum \"$aj_dl/code.tar.gz\" | cut -d ' ' -f 1)\n",
		tries, tries, tries) ||
	       aj_buf_addstr(b, "if [ \"$aj_got\" != ") || aj_shell_quote(b, digest) ||
	       aj_buf_addstr(b, " ]; then\n  echo \"aj: the code archive has SHA-256 $aj_got, "
			     "expected \"") || aj_shell_quote(b, digest) ||
	       aj_buf_addstr(b, " >&2\n  exit 1\nfi\n"
			     "tar -xzf \"$aj_dl/code.tar.gz\" -C " AJ_WORK_DIR "\n"
			     "rm -rf \"$aj_dl\"\n"
			     "cd " AJ_WORK_DIR "\n") ? -1 : 0;
}

enum aj_code_route aj_codeship_route(const struct aj_jobspec *spec)
{
	struct aj_code_volume v;

	return aj_code_via_volume(spec, &v) ? AJ_CODE_VOLUME :
	       aj_code_via_blob(spec) ? AJ_CODE_BLOB : AJ_CODE_NONE;
}

int aj_codeship_script(struct aj_buf *b, const struct aj_jobspec *spec, const char *digest,
		       const struct aj_code_blob *blob)
{
	struct aj_code_volume v;

	if (!digest)
		return 0;
	if (blob)
		return code_download(b, blob, digest);
	return aj_code_volume(spec, &v) ? code_copy(b, &v, digest) : 0;
}
