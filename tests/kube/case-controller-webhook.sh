# Case controller-webhook: ipam-controller --webhook=true serving the validating webhook over
# TLS (a certificate minted with openssl, the Secret's tls.crt and tls.key), called by the
# kit's API server through a ValidatingWebhookConfiguration like the operator's (its names,
# paths, rules and failurePolicy; a URL in place of the Service, which the API server
# outside the node's network cannot reach). Pools the reference's rules refuse are refused
# at kubectl, the message naming the field; valid ones are created; an update is judged
# too; the controller's status writes are not; a renewed certificate is served once re-read.

. "$top/tests/kube/ctl-lib.sh"
wh=$work/wh
mkdir -p "$wh/certs"
wh_port=$((20000 + RANDOM % 20000))
# mint_cert DIR: a CA and a serving certificate for the webhook's names and 127.0.0.1.
mint_cert() {
	local d=$1
	openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=nv-ipam-test-ca" \
		-keyout "$d/ca.key" -out "$d/ca.crt" 2>/dev/null &&
	openssl req -newkey rsa:2048 -nodes -subj "/CN=nv-ipam-webhook-service.$NS.svc" \
		-keyout "$d/tls.key.new" -out "$d/tls.csr" 2>/dev/null &&
	printf 'subjectAltName=DNS:nv-ipam-webhook-service.%s.svc,DNS:nv-ipam-webhook-service.%s.svc.cluster.local,IP:127.0.0.1\n' "$NS" "$NS" >"$d/ext" &&
	openssl x509 -req -in "$d/tls.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial -days 1 \
		-extfile "$d/ext" -out "$d/tls.crt.new" 2>/dev/null
}
vwc() { # CA_FILE: the operator's configuration, a URL in place of each Service reference
	awk -v base="https://127.0.0.1:$wh_port" -v ca="$(base64 -w0 <"$1")" '
		/^apiVersion: admissionregistration/ { on = 1 }
		!on || /cert-manager.io\/inject-ca-from/ { next }
		/^      service:$/ { svc = 1; next }
		svc && /^        (name|namespace):/ { next }
		svc && /^        path:/ { sub(/^ *path: /, ""); print "      url: " base $0; print "      caBundle: " ca; svc = 0; next }
		{ print }' "$top/conf-examples/nv-ipam/deploy/nv-ipam-webhook.yaml"
}
apply_out() { kc apply -f - 2>&1; }
ipp() { printf 'apiVersion: nv-ipam.nvidia.com/v1alpha1\nkind: IPPool\nmetadata: {name: %s, namespace: %s}\nspec: %s\n' "$1" "$CNS" "$2"; }
cidr() { printf 'apiVersion: nv-ipam.nvidia.com/v1alpha1\nkind: CIDRPool\nmetadata: {name: %s, namespace: %s}\nspec: %s\n' "$1" "$CNS" "$2"; }
denied() { # OUTPUT WEBHOOK FIELD_MESSAGE
	grep -q "admission webhook \"$2\" denied the request: .*$3" <<<"$1"
}

mint_cert "$wh" && mv "$wh/tls.key.new" "$wh/certs/tls.key" && mv "$wh/tls.crt.new" "$wh/certs/tls.crt"
node_yaml wh-n1 | kc apply -f - >/dev/null
ctl_start wh "$(ctl_sa wh)" --webhook=true --webhook-bind-address=127.0.0.1:$wh_port --webhook-cert-dir="$wh/certs"
check "the controller serves the webhook over TLS, the minted CA's" wait_until 20 eval \
	'[ "$(curl -s -o /dev/null -w "%{http_code}" --cacert "$wh/ca.crt" -X POST -d "{}" https://127.0.0.1:$wh_port/validate-nv-ipam-nvidia-com-v1alpha1-ippool)" = 400 ]'
vwc "$wh/ca.crt" >"$wh/vwc.yaml"
check "the operator's configuration, a URL in place of the Service" \
	eval 'grep -c "url: https://127.0.0.1:$wh_port/validate-nv-ipam-nvidia-com-v1alpha1-" "$wh/vwc.yaml" | grep -qx 2 && grep -q "failurePolicy: Fail" "$wh/vwc.yaml"'
kc apply -f "$wh/vwc.yaml" >/dev/null
# The API server takes a moment to load a new configuration.
wh_ready() { denied "$(ipp wh-probe '{subnet: "10.0.0.0/24", perNodeBlockSize: 0}' | apply_out)" validate-ippool.nv-ipam.nvidia.com perNodeBlockSize; }
check "the API server calls the webhook" wait_until 20 wh_ready

out=$(ipp wh-ok '{subnet: "10.77.0.0/16", perNodeBlockSize: 24, gateway: "10.77.0.1"}' | apply_out)
check "a valid IPPool is created" eval 'kc get ippool wh-ok -n "$CNS" >/dev/null 2>&1'
out=$(ipp wh-bad '{subnet: "10.77.0.0/24", perNodeBlockSize: 4, gateway: "10.78.0.1"}' | apply_out)
check "an IPPool whose gateway is outside its subnet: refused, spec.gateway named" \
	eval 'denied "$out" validate-ippool.nv-ipam.nvidia.com "spec.gateway: Invalid value: \"10.78.0.1\": is not part of the subnet" && ! kc get ippool wh-bad -n "$CNS" >/dev/null 2>&1'
out=$(ipp wh-bad '{subnet: "10.77.0.0/24", perNodeBlockSize: 0, exclusions: [{startIP: 10.77.0.9, endIP: 10.77.0.3}]}' | apply_out)
check "several errors: every field named" \
	eval 'denied "$out" validate-ippool.nv-ipam.nvidia.com "\[spec.perNodeBlockSize: Invalid value: 0: must be at least 1, spec.exclusions\[0\]: Invalid value: .*endIP should be equal or greater than startIP\]"'
out=$(ipp wh-ok '{subnet: "10.77.0.0/16", perNodeBlockSize: 24, gateway: "10.77.0.1", defaultGateway: true, routes: [{dst: 0.0.0.0/0}]}' | apply_out)
check "an update is judged too: a default route with defaultGateway refused" \
	eval 'denied "$out" validate-ippool.nv-ipam.nvidia.com "spec.routes\[0\].dst: Invalid value: \"0.0.0.0/0\"" && [ "$(kc get ippool wh-ok -n "$CNS" -o "jsonpath={.spec.defaultGateway}")" = "" ]'
out=$(cidr wh-cok '{cidr: "10.79.0.0/16", perNodeNetworkPrefix: 24, gatewayIndex: 1}' | apply_out)
check "a valid CIDRPool is created" eval 'kc get cidrpool wh-cok -n "$CNS" >/dev/null 2>&1'
out=$(cidr wh-cbad '{cidr: "10.79.0.1/16", perNodeNetworkPrefix: 24}' | apply_out)
check "a CIDRPool with host bits: refused, spec.cidr named" \
	eval 'denied "$out" validate-cidrpool.nv-ipam.nvidia.com "spec.cidr: Invalid value: \"10.79.0.1/16\": network prefix has host bits set"'
out=$(cidr wh-cbad '{cidr: "10.79.0.0/16", perNodeNetworkPrefix: 24, staticAllocations: [{nodeName: a, prefix: 10.79.1.0/24}, {nodeName: a, prefix: 10.79.2.0/24}]}' | apply_out)
check "a CIDRPool with two static allocations for a node: refused" \
	eval 'denied "$out" validate-cidrpool.nv-ipam.nvidia.com "spec.staticAllocations: Invalid value: .*contains multiple entries for node a"'
check "the controller carved the valid pools (its status writes pass the webhook's rules untouched)" \
	wait_until 15 eval '[ "$(pool_allocs ippool wh-ok | jq length)" -ge 1 ] && [ "$(pool_allocs cidrpool wh-cok | jq length)" -ge 1 ]'
check "its metrics count the verdicts" \
	eval '[ "$(curl -s 127.0.0.1:$(($(ctl_port wh) + 1))/metrics | awk "\$1 == \"nv_ipam_controller_webhook_reviews_total{kind=\\\"IPPool\\\",allowed=\\\"false\\\"}\" {print \$2}")" -ge 4 ]'

# A renewed certificate (another CA): served once the controller re-reads it (every 10 s; a
# hang guard of 60 s), the time printed.
mkdir -p "$wh/new"
mint_cert "$wh/new" && mv "$wh/new/tls.key.new" "$wh/certs/tls.key" && mv "$wh/new/tls.crt.new" "$wh/certs/tls.crt"
t0=$(date +%s%N)
check "a renewed certificate is served" wait_until 60 eval \
	'[ "$(curl -s -o /dev/null -w "%{http_code}" --cacert "$wh/new/ca.crt" -X POST -d "{}" https://127.0.0.1:$wh_port/validate-nv-ipam-nvidia-com-v1alpha1-ippool)" = 400 ]'
note "served $(ms_since "$t0") ms after it was written"
vwc "$wh/new/ca.crt" | kc apply -f - >/dev/null
check "the API server calls it with the new CA" wait_until 20 wh_ready

kc delete validatingwebhookconfiguration nv-ipam-validating-webhook-configuration >/dev/null
ctl_stop wh
kc delete node wh-n1 --ignore-not-found >/dev/null
kc delete ippool wh-ok -n "$CNS" --ignore-not-found >/dev/null
kc delete cidrpool wh-cok -n "$CNS" --ignore-not-found >/dev/null
kc delete lease dd1643cf.nvidia.com -n "$CNS" --ignore-not-found >/dev/null
