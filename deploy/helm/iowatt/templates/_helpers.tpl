{{/* Names and labels. */}}
{{- define "iowatt.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "iowatt.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "iowatt.selector" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "iowatt.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "iowatt.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{ default (include "iowatt.fullname" .) .Values.serviceAccount.name }}
{{- else -}}
{{ default "default" .Values.serviceAccount.name }}
{{- end -}}
{{- end -}}

{{/* The Secret each of the three connection secrets comes from: the user's, or the chart's. */}}
{{- define "iowatt.secretName" -}}
{{- $v := index .root.Values .key -}}
{{- if $v.existingSecret -}}{{ $v.existingSecret }}{{- else -}}{{ include "iowatt.fullname" .root }}{{- end -}}
{{- end -}}

{{/* The environment every server container gets (API, worker, beat, migrations). */}}
{{- define "iowatt.env" -}}
- name: IOWATT_ENV
  value: prod
- name: IOWATT_PUBLIC_URL
  value: {{ required "publicUrl is required (the address users and agents reach)" .Values.publicUrl | quote }}
- name: IOWATT_DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "iowatt.secretName" (dict "root" . "key" "database") }}
      key: {{ .Values.database.existingSecretKey }}
- name: IOWATT_REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "iowatt.secretName" (dict "root" . "key" "redis") }}
      key: {{ .Values.redis.existingSecretKey }}
- name: IOWATT_SECRET_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "iowatt.secretName" (dict "root" . "key" "secretKey") }}
      key: {{ .Values.secretKey.existingSecretKey }}
- name: IOWATT_TRUSTED_PROXIES
  value: {{ toJson .Values.trustedProxies | quote }}
{{- range $name, $value := .Values.env }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{- end -}}

{{- define "iowatt.envFrom" -}}
{{- with .Values.extraEnvFrom }}
envFrom:
{{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* Pod-level settings shared by every workload. */}}
{{- define "iowatt.podSpec" -}}
serviceAccountName: {{ include "iowatt.serviceAccountName" .root }}
automountServiceAccountToken: false
securityContext:
  {{- toYaml .root.Values.podSecurityContext | nindent 2 }}
{{- with .root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .part.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .part.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .part.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
