import crypto from "node:crypto";
import type {SecretKindId} from "../../src/core/common/secretScan/secretKinds.js";
import {ibanLengths} from "../../src/core/common/secretScan/checksums.js";
import {SeededRandom} from "../../tools/cloudSim/SeededRandom.js";

/**
 * Real-format fake secrets for the scan of cloud requests: `text` is what a user would paste
 * (the value, or a line holding it), `value` the part that must never leave. Generated from a
 * seed: tokens in each provider's format, PEM and OpenSSH private keys made by node:crypto,
 * JWTs signed here, card numbers with a valid Luhn digit, IBANs with valid mod-97 check digits.
 */
export type SecretVector = {kind: SecretKindId, label: string, text: string, value: string};

const upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const lower = "abcdefghijklmnopqrstuvwxyz";
const digits = "0123456789";
const alnum = upper + lower + digits;
const hex = "0123456789abcdef";

export function secretVectors(seed: number): SecretVector[] {
    const random = new SeededRandom(seed);
    const chars = (alphabet: string, length: number) => Array.from({length}, () => random.pick([...alphabet])).join("");
    const vectors: SecretVector[] = [];
    const add = (kind: SecretKindId, label: string, value: string, text = value) => vectors.push({kind, label, text, value});

    // Private keys, made by node:crypto: PKCS#8, PKCS#1, SEC1 and an OpenSSH ed25519 key; a PGP block.
    const rsa = crypto.generateKeyPairSync("rsa", {modulusLength: 2048});
    const pkcs8 = rsa.privateKey.export({type: "pkcs8", format: "pem"}) as string;
    add("private-key", "RSA PKCS#8 PEM", pkcs8.trim());
    add("private-key", "RSA PKCS#1 PEM", (rsa.privateKey.export({type: "pkcs1", format: "pem"}) as string).trim());
    const ec = crypto.generateKeyPairSync("ec", {namedCurve: "P-256"});
    add("private-key", "EC SEC1 PEM", (ec.privateKey.export({type: "sec1", format: "pem"}) as string).trim());
    add("private-key", "encrypted PKCS#8 PEM", (rsa.privateKey.export({type: "pkcs8", format: "pem", cipher: "aes-256-cbc", passphrase: "correct horse"}) as string).trim());
    add("private-key", "OpenSSH ed25519", openSshEd25519PrivateKey(random));
    add("private-key", "PEM inside JSON (a GCP service account file)", pkcs8.split("\n")[1]!,
        JSON.stringify({type: "service_account", private_key_id: chars(hex, 40), private_key: pkcs8}, null, 2));
    add("private-key", "PGP private key block", pgpBlock(random));

    // Provider tokens in each rule's format.
    add("aws-access-key", "AKIA", `AKIA${chars(upper + digits, 16)}`);
    add("aws-access-key", "ASIA (temporary)", `ASIA${chars(upper + digits, 16)}`);
    const awsSecret = chars(alnum + "/+", 40);
    add("aws-secret-key", "aws_secret_access_key =", awsSecret, `aws_secret_access_key = ${awsSecret}`);
    add("aws-secret-key", "AWS_SECRET_ACCESS_KEY: in YAML", awsSecret.split("").reverse().join(""), `AWS_SECRET_ACCESS_KEY: "${awsSecret.split("").reverse().join("")}"`);
    add("github-token", "classic ghp_", `ghp_${chars(alnum, 36)}`);
    add("github-token", "fine-grained github_pat_", `github_pat_${chars(alnum + "_", 82)}`);
    add("gitlab-token", "glpat-", `glpat-${chars(alnum + "_-", 20)}`);
    add("slack-token", "xoxb-", `xoxb-${chars(digits, 12)}-${chars(digits, 13)}-${chars(alnum, 24)}`);
    const hook = `https://hooks.slack.com/services/T${chars(upper + digits, 8)}/B${chars(upper + digits, 10)}/${chars(alnum, 24)}`;
    add("slack-webhook", "incoming webhook", hook);
    add("npm-token", "npm_", `npm_${chars(alnum, 36)}`);
    add("openai-key", "sk-proj-", `sk-proj-${chars(alnum + "_-", 74)}T3BlbkFJ${chars(alnum + "_-", 74)}`);
    add("openai-key", "legacy sk-", `sk-${chars(alnum, 20)}T3BlbkFJ${chars(alnum, 20)}`);
    add("anthropic-key", "sk-ant-api03-", `sk-ant-api03-${chars(alnum + "_-", 93)}AA`);
    add("groq-key", "gsk_", `gsk_${chars(alnum, 52)}`);
    add("huggingface-token", "hf_", `hf_${chars(upper + lower, 34)}`);
    add("sendgrid-key", "SG.", `SG.${chars(alnum, 22)}.${chars(alnum, 43)}`);
    add("shopify-token", "shpat_", `shpat_${chars(hex, 32)}`);
    add("grafana-token", "glc_", `glc_${chars(alnum, 80)}==`);
    add("grafana-token", "glsa_", `glsa_${chars(alnum, 32)}_${chars(hex, 8)}`);
    add("linear-key", "lin_api_", `lin_api_${chars(alnum, 40)}`);
    add("notion-token", "ntn_", `ntn_${chars(digits, 11)}${chars(alnum, 35)}`);
    let serviceAccount = JSON.stringify({signInAddress: "my.1password.com", secret: chars(alnum, 120)});
    while (serviceAccount.length % 3 !== 1) // so that the base64 ends "fQ==", as such tokens do
        serviceAccount = JSON.stringify({...JSON.parse(serviceAccount), secret: JSON.parse(serviceAccount).secret + chars(alnum, 1)});
    add("1password-token", "ops_", `ops_${Buffer.from(serviceAccount).toString("base64")}`);
    const dbPassword = `${chars(alnum, 14)}9`;
    add("database-url", "postgres://", dbPassword, `postgres://app_user:${dbPassword}@db.internal.example.net:5432/orders`);
    add("database-url", "mongodb+srv://", dbPassword.toLowerCase(), `mongodb+srv://admin:${dbPassword.toLowerCase()}@cluster0.abcde.mongodb.net/test`);
    add("database-url", "mysql://", dbPassword.toUpperCase(), `mysql://root:${dbPassword.toUpperCase()}@127.0.0.2:3306/shop`);
    const urlPassword = chars(alnum, 16);
    add("url-password", "https://user:password@host", urlPassword, `https://deploy:${urlPassword}@git.example.org/team/repo.git`);
    add("vault-token", "hvs.", `hvs.${chars(alnum + "_-", 95)}`);
    add("vercel-token", "vcp_", `vcp_${chars(alnum, 24)}`);
    add("databricks-token", "dapi", `dapi${chars(hex, 32)}`);
    add("docker-token", "dckr_pat_", `dckr_pat_${chars(alnum + "_-", 27)}`);
    add("figma-token", "figd_", `figd_${chars(alnum + "_-", 40)}`);

    // Our own rules.
    add("stripe-key", "sk_live_", `sk_live_${chars(alnum, 24)}`);
    add("stripe-key", "rk_test_", `rk_test_${chars(alnum, 99)}`);
    const hmacKey = crypto.randomBytes(32);
    add("jwt", "HS256", signJwt({alg: "HS256", typ: "JWT"}, {sub: "1234567890", name: "Ada", iat: 1_765_000_000}, hmacKey));
    const rs256 = signJwt({alg: "RS256", typ: "JWT", kid: chars(hex, 8)}, {sub: "user-7", scope: "admin"}, rsa.privateKey);
    add("jwt", "RS256 (Bearer header)", rs256, `Authorization: Bearer ${rs256}`);
    add("jwt", "alg none", `${base64Url(JSON.stringify({alg: "none"}))}.${base64Url(JSON.stringify({admin: true}))}.`);
    for (const [name, value] of [
        ["DB_PASSWORD", `${chars(alnum, 10)}!7`], ["export GITHUB_TOKEN", `"${chars(alnum, 20)}"`], ["API_KEY", `'${chars(lower + digits, 24)}'`],
        ["JWT_SECRET", chars(alnum + "-_", 32)], ["SMTP_PASS", `S${chars(lower, 6)}#${chars(digits, 3)}`], ["CLIENT_SECRET", chars(hex, 40)]
    ] as const)
        add("env-secret", `${name}=`, value.replace(/^["']|["']$/g, ""), `${name}=${value}`);
    for (const [label, number] of [
        ["Visa test number", "4111111111111111"], ["Mastercard test number", "5555555555554444"], ["Amex test number", "378282246310005"],
        ["Discover test number", "6011111111111117"], ["Diners test number", "30569309025904"], ["JCB test number", "3530111333300000"],
        ["Mastercard 2-series", "2223003122003222"], ["UnionPay test number", "6200000000000005"], ["Visa 19 digits", "4000000000000000006"]
    ] as const)
        add("card-number", label, number);
    for (const prefix of ["4", "51", "52", "53", "54", "55", "34", "37", "6011", "35"]) {
        const length = prefix === "34" || prefix === "37" ? 15 : 16;
        const number = withLuhnDigit(prefix + chars(digits, length - prefix.length - 1));
        const printed = length === 15 ? `${number.slice(0, 4)} ${number.slice(4, 10)} ${number.slice(10)}` : number.replace(/(\d{4})(?=\d)/g, random.chance(0.5) ? "$1 " : "$1-");
        add("card-number", `generated ${prefix}… (${printed.includes(" ") ? "spaces" : "dashes"})`, printed);
    }
    for (const iban of ["DE89370400440532013000", "GB82WEST12345698765432", "FR1420041010050500013M02606", "NL91ABNA0417164300",
        "ES9121000418450200051332", "IT60X0542811101000000123456", "CH9300762011623852957", "BE68539007547034", "AT611904300234573201",
        "PL61109010140000071219812874", "NO9386011117947", "SE4550000000058398257466"])
        add("iban", `${iban.slice(0, 2)} (registry example)`, iban, iban.replace(/(.{4})(?=.)/g, "$1 "));
    for (const country of ["DE", "FR", "GB", "IE", "PT", "FI", "DK", "LU"]) {
        const bban = country === "GB" || country === "IE" ? chars(upper, 4) + chars(digits, ibanLengths[country]! - 8) : chars(digits, ibanLengths[country]! - 4);
        add("iban", `generated ${country}`, withIbanCheck(country, bban));
    }
    add("never-send", "a phrase of the user's list", "Project Falcon", "the Project  Falcon budget");
    add("never-send", "a word, another case", "kestrel-7", "Ask KESTREL-7 about it.");
    add("never-send", "Cyrillic", "Зелёный Слон", "про зелёный слон и прочее");
    return vectors;
}

/** The "Never send these" list the vectors above are scanned with. */
export const neverSendVectors = ["Project Falcon", "Kestrel-7", "Зелёный Слон"];

export function withLuhnDigit(partial: string): string {
    for (let check = 0; check <= 9; check++) {
        const candidate = partial + check;
        let sum = 0;
        for (let index = 0; index < candidate.length; index++) {
            let digit = Number(candidate[candidate.length - 1 - index]);
            if (index % 2 === 1)
                digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
            sum += digit;
        }
        if (sum % 10 === 0)
            return candidate;
    }
    throw new Error("unreachable");
}

export function withIbanCheck(country: string, bban: string): string {
    const numeric = (bban + country + "00").replace(/[A-Z]/g, (char) => String(char.charCodeAt(0) - 55));
    const check = 98n - BigInt(numeric) % 97n;
    return `${country}${String(check).padStart(2, "0")}${bban}`;
}

function base64Url(text: string | Buffer) {
    return Buffer.from(text).toString("base64url");
}

function signJwt(header: object, payload: object, key: Buffer | crypto.KeyObject) {
    const body = `${base64Url(JSON.stringify(header))}.${base64Url(JSON.stringify(payload))}`;
    const signature = Buffer.isBuffer(key)
        ? crypto.createHmac("sha256", key).update(body).digest()
        : crypto.sign("sha256", Buffer.from(body), key);
    return `${body}.${base64Url(signature)}`;
}

/** An unencrypted OpenSSH private key (PROTOCOL.key) around an ed25519 key pair from node:crypto. */
function openSshEd25519PrivateKey(random: SeededRandom) {
    const {publicKey, privateKey} = crypto.generateKeyPairSync("ed25519");
    const pub = Buffer.from(publicKey.export({format: "jwk"}).x!, "base64url");
    const seed = Buffer.from(privateKey.export({format: "jwk"}).d!, "base64url");
    const string = (value: Buffer | string) => {
        const bytes = Buffer.from(value);
        const length = Buffer.alloc(4);
        length.writeUInt32BE(bytes.length);
        return Buffer.concat([length, bytes]);
    };
    const uint32 = (value: number) => {
        const bytes = Buffer.alloc(4);
        bytes.writeUInt32BE(value);
        return bytes;
    };
    const publicBlob = Buffer.concat([string("ssh-ed25519"), string(pub)]);
    const check = random.int(2 ** 32);
    let secret = Buffer.concat([uint32(check), uint32(check), string("ssh-ed25519"), string(pub), string(Buffer.concat([seed, pub])), string("me@laptop")]);
    for (let pad = 1; secret.length % 8 !== 0; pad++)
        secret = Buffer.concat([secret, Buffer.from([pad])]);
    const key = Buffer.concat([Buffer.from("openssh-key-v1\0"), string("none"), string("none"), string(""), uint32(1), string(publicBlob), string(secret)]);
    return `-----BEGIN OPENSSH PRIVATE KEY-----\n${key.toString("base64").replace(/(.{70})/g, "$1\n").trim()}\n-----END OPENSSH PRIVATE KEY-----`;
}

/** An ASCII-armored PGP private key block of the right shape (a secret-key packet's base64 body and a CRC line). */
function pgpBlock(random: SeededRandom) {
    const body = Buffer.concat([Buffer.from([0x95, 0x03, 0x98]), Buffer.from(Array.from({length: 600}, () => random.int(256)))]).toString("base64");
    return `-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n${body.replace(/(.{64})/g, "$1\n").trim()}\n=${Buffer.from([random.int(256), random.int(256), random.int(256)]).toString("base64")}\n-----END PGP PRIVATE KEY BLOCK-----`;
}
