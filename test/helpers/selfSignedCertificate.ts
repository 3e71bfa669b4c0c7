import {execFileSync} from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import {tempDir} from "./tempCore.js";

/**
 * A throwaway self-signed certificate (and its key, PEM) for the given host names, made with
 * Debian's `openssl`, for an https test server on 127.0.0.1 that a client reaches under those names.
 */
export function selfSignedCertificate(hostNames: string[]): {key: string, cert: string} {
    const dir = tempDir("tls");
    const keyPath = path.join(dir, "key.pem");
    const certPath = path.join(dir, "cert.pem");
    execFileSync("openssl", [
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
        "-keyout", keyPath, "-out", certPath, "-subj", `/CN=${hostNames[0]}`,
        "-addext", `subjectAltName=${hostNames.map((name) => `DNS:${name}`).join(",")}`
    ], {stdio: "ignore"});
    const pair = {key: fs.readFileSync(keyPath, "utf8"), cert: fs.readFileSync(certPath, "utf8")};
    fs.rmSync(dir, {recursive: true, force: true});
    return pair;
}
