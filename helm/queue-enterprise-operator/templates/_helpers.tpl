{{/* The operator's name; its pods carry app.kubernetes.io/name=queue-enterprise-operator, which the QueueClusters'
     NetworkPolicies admit to the nodes' admin port. */}}
{{- define "qe-operator.name" -}}
queue-enterprise-operator
{{- end -}}

{{- define "qe-operator.fullname" -}}
{{- if eq .Release.Name "queue-enterprise-operator" -}}
queue-enterprise-operator
{{- else -}}
{{- printf "%s-queue-enterprise-operator" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "qe-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "qe-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "qe-operator.labels" -}}
{{ include "qe-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "qe-operator.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "qe-operator.nodeImage" -}}
{{- printf "%s:%s" .Values.nodeImage.repository (default .Chart.AppVersion .Values.nodeImage.tag) -}}
{{- end -}}

{{- define "qe-operator.calibrationImage" -}}
{{- printf "%s:%s" .Values.calibrationImage.repository (default .Chart.AppVersion .Values.calibrationImage.tag) -}}
{{- end -}}

{{/* What the operator may do in a namespace it watches: least privilege for what it manages. */}}
{{- define "qe-operator.namespacedRules" -}}
- apiGroups: ["queue-enterprise.io"]
  resources: ["queueclusters"]
  # patch: only to remove queue-enterprise.io/rotate-node once its rotation is done (docs/operator.md)
  verbs: ["get", "list", "watch", "patch"]
- apiGroups: ["queue-enterprise.io"]
  resources: ["queueclusters/status"]
  verbs: ["get", "patch", "update"]
- apiGroups: ["apps"]
  resources: ["statefulsets"]
  verbs: ["get", "list", "watch", "create", "patch", "update", "delete"]
- apiGroups: [""]
  resources: ["services", "configmaps", "secrets"]
  verbs: ["get", "list", "watch", "create", "patch", "update", "delete"]
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "list", "watch", "delete"]
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create"]
- apiGroups: ["batch"]
  resources: ["jobs"]
  verbs: ["get", "create"]
- apiGroups: ["policy"]
  resources: ["poddisruptionbudgets"]
  verbs: ["get", "list", "watch", "create", "patch", "update", "delete"]
- apiGroups: ["networking.k8s.io"]
  resources: ["networkpolicies"]
  verbs: ["get", "list", "watch", "create", "patch", "update", "delete"]
- apiGroups: ["monitoring.coreos.com"]
  resources: ["podmonitors"]
  verbs: ["get", "list", "watch", "create", "patch", "update", "delete"]
{{- end -}}

{{/*
What the values need from the cluster, checked before anything is created, each failure in one line: a failed install
leaves no release and no crash-looping pod behind. Checked only where Helm sees the cluster (install, upgrade,
--dry-run=server): there the chart's own CRD is among the API versions, as Helm applies crds/ before rendering.
Offline rendering (helm template, helm-java's template, GitOps tools) has no cluster to ask, and a lookup there may even
try one (helm-java's does): nothing is checked.
*/}}
{{- define "qe-operator.checkCluster" -}}
{{- if .Capabilities.APIVersions.Has "queue-enterprise.io/v1alpha1/QueueCluster" -}}
{{- if and .Values.prometheusRule.enabled (not (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1/PrometheusRule")) -}}
{{- fail "prometheusRule.enabled needs the Prometheus Operator's CRDs (monitoring.coreos.com/v1 PrometheusRule), which this cluster lacks: install the Prometheus Operator first, or leave prometheusRule.enabled false (docs/operator.md: installing)" -}}
{{- end -}}
{{- if and .Values.metrics.serviceMonitor.enabled (not (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1/ServiceMonitor")) -}}
{{- fail "metrics.serviceMonitor.enabled needs the Prometheus Operator's CRDs (monitoring.coreos.com/v1 ServiceMonitor), which this cluster lacks: install the Prometheus Operator first, or leave metrics.serviceMonitor.enabled false (docs/operator.md: installing)" -}}
{{- end -}}
{{- range .Values.watchNamespaces -}}
{{- if not (lookup "v1" "Namespace" "" .) -}}
{{- fail (printf "watchNamespaces: namespace %s does not exist: create it first (kubectl create namespace %s), the operator cannot watch it otherwise" . .) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
