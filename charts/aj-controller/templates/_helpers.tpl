{{/* Chart name, at most 63 characters. */}}
{{- define "aj-controller.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Full name of the release's objects. A release named like the chart keeps the
chart's name alone (helm install aj-controller ... gives "aj-controller").
*/}}
{{- define "aj-controller.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "aj-controller.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels on every object. */}}
{{- define "aj-controller.labels" -}}
helm.sh/chart: {{ include "aj-controller.chart" . }}
{{ include "aj-controller.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: controller
app.kubernetes.io/part-of: aj
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Labels that select the controller's pods (immutable once installed). */}}
{{- define "aj-controller.selectorLabels" -}}
app.kubernetes.io/name: {{ include "aj-controller.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "aj-controller.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "aj-controller.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Leader election is needed as soon as two pods may run. */}}
{{- define "aj-controller.leaderElect" -}}
{{- if or .Values.leaderElection.enabled (gt (int .Values.replicaCount) 1) }}true{{ end }}
{{- end }}

{{/*
What the controller does with the API, and nothing more: read AjJobs and
AjTemplates, write AjJob status, set and clear the finalizer and annotation
of AjJobs forwarded to Azure, create the Volcano Jobs (and delete them on
cancel), post Events. deploy/rbac.yaml is rendered from this.
*/}}
{{- define "aj-controller.rules" -}}
# Read what users submit; write only the status.
- apiGroups: [aj.dev]
  resources: [ajjobs, ajtemplates]
  verbs: [get, list, watch]
# AjJobs forwarded to Azure: the finalizer aj.dev/azure-job and the annotation
# aj.dev/azure-workspace, by merge patch; finished AjJobs deleted after their
# ttlSecondsAfterFinished.
- apiGroups: [aj.dev]
  resources: [ajjobs]
  verbs: [patch, delete]
- apiGroups: [aj.dev]
  resources: [ajjobs/status]
  verbs: [get, update, patch]
# The Volcano Jobs it creates (and deletes on cancel).
- apiGroups: [batch.volcano.sh]
  resources: [jobs]
  verbs: [get, list, watch, create, delete]
# The kube backend's Indexed Jobs (batch/v1), created, watched and deleted on
# cancel, and the headless Service created beside each (owned by the AjJob,
# removed by the garbage collector with it).
- apiGroups: [batch]
  resources: [jobs]
  verbs: [get, list, watch, create, delete]
- apiGroups: [""]
  resources: [services]
  verbs: [create]
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]
# The Secret <job>-storage holding the SAS of storage mounts and blob code:
# created, and renewed by a JSON patch that first tests the owner. Never read
# or listed.
- apiGroups: [""]
  resources: [secrets]
  verbs: [create, patch]
# Read, never written: the pods of a failed job (which task, pod and exit code
# failed it) or of a cancelled one (gone yet?), and why a job waits (its
# PodGroup's Unschedulable condition, the scheduler's Events about it). aj's
# own pods (label aj.dev/ajjob) are watched: a failure is recorded before the
# backend deletes the pod.
- apiGroups: [""]
  resources: [pods]
  verbs: [list, watch]
- apiGroups: [scheduling.volcano.sh]
  resources: [podgroups]
  verbs: [get]
- apiGroups: [""]
  resources: [events]
  verbs: [list]
# Read, never written: what Kueue says of a queued Job of the kube backend (its
# Workload's QuotaReserved and Admitted conditions, the ClusterQueue that
# admitted it), listed by the Workload's job-uid label; get and watch show no
# more than list. Where Kueue is not installed the look finds nothing.
- apiGroups: [kueue.x-k8s.io]
  resources: [workloads]
  verbs: [get, list, watch]
{{- if not .Values.watchNamespace }}
{{ include "aj-controller.placementRules" . }}
{{- end }}
{{- end }}

{{/*
What placement reads besides the pods, in the whole cluster whatever
namespace is watched: with watchNamespace set these, and the pods of every
namespace, are a ClusterRole of their own (rbac.yaml), as a Role cannot
grant them.
*/}}
{{- define "aj-controller.placementRules" -}}
# Placement AjJobs: what limits a start, listed at most every few seconds for
# all of them together (the nodes and their pods' requests, Volcano's
# Queues, Kueue's queues and flavors); never written. The nodes alone, at
# most every 30 s: whether a job the scheduler cannot place could ever fit.
- apiGroups: [""]
  resources: [nodes]
  verbs: [list]
- apiGroups: [scheduling.volcano.sh]
  resources: [queues]
  verbs: [list]
- apiGroups: [kueue.x-k8s.io]
  resources: [clusterqueues, localqueues, resourceflavors]
  verbs: [list]
{{- end }}

{{/*
The --azure-allow rules from azure.allow: NS=workspace:REF,vc:REF;NS=...
*/}}
{{- define "aj-controller.azureAllow" -}}
{{- $rules := list }}
{{- range . }}
{{- $entries := list }}
{{- range .workspaces }}{{ $entries = append $entries (printf "workspace:%s" .) }}{{ end }}
{{- range .virtualClusters }}{{ $entries = append $entries (printf "vc:%s" .) }}{{ end }}
{{- $rules = append $rules (printf "%s=%s" .namespace (join "," $entries)) }}
{{- end }}
{{- join ";" $rules }}
{{- end }}
