#!/bin/sh
# Installs the S3 clients `npm run test:clients` drives, from Debian's packages:
# awscli (aws), rclone, s3cmd and python3-boto3. Run as root (or with sudo).
set -eu
packages="awscli rclone s3cmd python3-boto3"
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-clients: apt-get not found; install these with your package manager: $packages" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends $packages
