#!/usr/bin/env bash
# Builds the Lambda container image, pushes it to ECR and prints the digest-pinned image_uri for the
# Terraform module (deploy by digest: a tag can move, a digest cannot).
#
# Usage: scripts/push-image.sh --repository <account>.dkr.ecr.<region>.amazonaws.com/<name>
#                              [--tag <tag>] [--arch x86_64|arm64] [--dry-run]
#   --tag      default: git-<commit> of HEAD (ECR tags should be immutable, so one tag per commit)
#   --arch     the Lambda function's architecture (default x86_64)
#   --dry-run  print every command instead of running it
# The last line of stdout is `image_uri=<repository>@sha256:<digest>`.
set -euo pipefail

repository=""
tag=""
arch="x86_64"
dry_run=0
context="$(cd "$(dirname "$0")/.." && pwd)"

fail() {
  echo "$1" >&2
  exit 2
}

# The value of option $1, which must not be missing or be the next option.
value_of() {
  if [ $# -lt 2 ] || [ -z "$2" ] || [[ "$2" == --* ]]; then
    fail "Invalid $1: expected a value, got nothing"
  fi
  printf '%s' "$2"
}

while [ $# -gt 0 ]; do
  case "$1" in
    --repository) repository="$(value_of "$@")"; shift 2 ;;
    --tag) tag="$(value_of "$@")"; shift 2 ;;
    --arch) arch="$(value_of "$@")"; shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    -h | --help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) fail "Invalid argument: expected --repository, --tag, --arch or --dry-run, got '$1'" ;;
  esac
done

# Validate everything before running anything.
ecr_pattern='^([0-9]{12})\.dkr\.ecr\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?/([a-z0-9][a-z0-9._/-]*)$'
if [[ ! "$repository" =~ $ecr_pattern ]]; then
  fail "Invalid --repository: expected <account>.dkr.ecr.<region>.amazonaws.com/<name>, got '$repository'"
fi
region="${BASH_REMATCH[2]}"
repository_name="${BASH_REMATCH[4]}"
registry="${repository%%/*}"

case "$arch" in
  x86_64) platform="linux/amd64" ;;
  arm64) platform="linux/arm64" ;;
  *) fail "Invalid --arch: expected x86_64 or arm64, got '$arch'" ;;
esac

if [ -z "$tag" ]; then
  commit="$(git -C "$context" rev-parse --short=12 HEAD 2>/dev/null)" ||
    fail "Invalid --tag: expected a value (no git commit to derive one from), got nothing"
  tag="git-$commit"
  # A tag names one image forever (immutable ECR tags): uncommitted build inputs would make git-<commit> lie.
  if [ -n "$(git -C "$context" status --porcelain -- Dockerfile .dockerignore package.json package-lock.json \
    tsconfig.json src image scripts/build-image.ts 2>/dev/null)" ]; then
    message="Invalid --tag: expected a value when build inputs have uncommitted changes ($tag would not describe the image), got nothing"
    if [ "$dry_run" = 1 ]; then echo "warning: $message" >&2; else fail "$message"; fi
  fi
fi
if [[ ! "$tag" =~ ^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$ ]]; then
  fail "Invalid --tag: expected letters, digits, '.', '_' or '-' (at most 128), got '$tag'"
fi

# Prints a command, shell-quoted, as it would run.
show() {
  local quoted=()
  for word in "$@"; do quoted+=("$(printf '%q' "$word")"); done
  echo "+ ${quoted[*]}"
}

# Runs a command, or only prints it under --dry-run.
run() {
  if [ "$dry_run" = 1 ]; then show "$@"; else show "$@" >&2; "$@"; fi
}

if [ "$dry_run" = 0 ]; then
  command -v aws >/dev/null || fail "The aws CLI is missing: install it, or use --dry-run to see the commands"
  docker buildx version >/dev/null 2>&1 ||
    fail "docker buildx is missing: install Docker with buildx, or use --dry-run to see the commands"
fi

# 1. Log in to the registry (the password goes through a pipe, never a command line).
if [ "$dry_run" = 1 ]; then
  echo "$(show aws ecr get-login-password --region "$region") | $(show docker login --username AWS --password-stdin "$registry" | cut -c3-)"
else
  show aws ecr get-login-password --region "$region" >&2
  aws ecr get-login-password --region "$region" |
    docker login --username AWS --password-stdin "$registry" >&2
fi

# 2. Build for Lambda's platform and push. No provenance or SBOM attestations: Lambda rejects the OCI index
#    they create; the result is a single-platform image manifest. buildx writes the pushed manifest's digest
#    to the metadata file: that is the image this build made (a lookup by tag could find another push's).
metadata="$(mktemp "${TMPDIR:-/tmp}/push-image-metadata.XXXXXX")"
trap 'rm -f "$metadata"' EXIT
run docker buildx build \
  --provenance=false \
  --sbom=false \
  --platform "$platform" \
  --tag "$repository:$tag" \
  --metadata-file "$metadata" \
  --push \
  "$context"

# 3. The digest of the pushed image, from buildx's metadata (`containerimage.digest`).
digest_of() {
  sed -n 's/.*"containerimage\.digest" *: *"\(sha256:[0-9a-f]\{64\}\)".*/\1/p' "$1" | head -n 1
}
if [ "$dry_run" = 1 ]; then
  digest="sha256:<containerimage.digest of $repository_name:$tag>"
else
  digest="$(digest_of "$metadata")"
  [[ "$digest" =~ ^sha256:[0-9a-f]{64}$ ]] ||
    fail "buildx reported no containerimage.digest for $repository:$tag (metadata: $(tr -d '\n' <"$metadata"))"
fi

echo "image_uri=$repository@$digest"
