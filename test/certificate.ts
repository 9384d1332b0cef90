import { execFileSync, spawnSync } from 'node:child_process'
import path from 'node:path'

/** Whether openssl is installed: node:crypto makes keys, not X.509 certificates. */
export const hasOpenssl = spawnSync('openssl', ['version']).status === 0

export interface CertificatePair {
  /** The certificate's PEM file. */
  cert: string
  /** Its key's PEM file. */
  key: string
  /** The certificate's SHA-256 fingerprint as openssl prints it (`AB:CD:…`), as a TLS peer reports it. */
  fingerprint: string
}

/** A self-signed certificate for 127.0.0.1 and localhost (common name `name`), with its key, written into `dir`. */
export function selfSignedCertificate (dir: string, name: string): CertificatePair {
  const cert = path.join(dir, `${name}.cert.pem`)
  const key = path.join(dir, `${name}.key.pem`)
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', key, '-out', cert, '-days', '2', '-subj', `/CN=${name}`,
    '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'], { stdio: 'ignore' })
  const fingerprint = execFileSync('openssl', ['x509', '-in', cert, '-noout', '-fingerprint', '-sha256'], { encoding: 'utf8' }).trim().split('=')[1]
  return { cert, key, fingerprint }
}
