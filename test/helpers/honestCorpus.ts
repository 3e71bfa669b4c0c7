import fs from "node:fs";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {SeededRandom} from "../../tools/cloudSim/SeededRandom.js";
import {englishProseFiles} from "./englishProse.js";
import {secretVectors, withIbanCheck, withLuhnDigit} from "./secretCorpus.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * Text that holds no secret and must not stop a cloud request: this project's README.md and
 * SECURITY.md (frozen copies, test/fixtures/englishProse), its TypeScript sources (read now, as they are), prose in several languages full of
 * numbers, code and configuration with placeholders instead of secrets, numbers that fail Luhn,
 * IBAN-like strings with a wrong check, and JWT look-alikes that do not decode.
 */
export function honestCorpus(seed: number): Array<{label: string, text: string}> {
    const random = new SeededRandom(seed);
    const texts: Array<{label: string, text: string}> = [];
    texts.push(...englishProseFiles());
    for (const file of sourceFiles(path.join(root, "src")))
        texts.push({label: path.relative(root, file), text: fs.readFileSync(file, "utf8")});
    for (const [label, text] of Object.entries(prose))
        texts.push({label: `prose (${label})`, text});
    for (const [label, text] of Object.entries(code))
        texts.push({label: `code (${label})`, text});

    const vectors = secretVectors(seed);
    const badLuhn = Array.from({length: 300}, () => {
        const valid = withLuhnDigit(random.pick(["4", "51", "55", "37", "6011", "35"]) + String(random.int(1e9)).padStart(9, "0") + String(random.int(1e3)).padStart(3, "0"));
        const wrong = valid.slice(0, -1) + String((Number(valid.at(-1)) + 1 + random.int(9)) % 10);
        return random.chance(0.5) ? wrong : wrong.replace(/(\d{4})(?=\d)/g, "$1 ");
    });
    texts.push({label: "card-like numbers that fail Luhn", text: badLuhn.map((number) => `Order ref ${number} shipped.`).join("\n")});
    const badIbans = vectors.filter((vector) => vector.kind === "iban").flatMap((vector) => {
        const compact = vector.value;
        const check = (Number(compact.slice(2, 4)) + 1 + random.int(90)) % 100;
        return [compact.slice(0, 2) + String(check).padStart(2, "0") + compact.slice(4), withIbanCheck(compact.slice(0, 2), compact.slice(4)).slice(0, -1) + "X"];
    });
    texts.push({label: "IBAN-like strings with a wrong check", text: badIbans.map((iban) => `Reference: ${iban.replace(/(.{4})(?=.)/g, "$1 ")}`).join("\n")});
    texts.push({label: "JWT look-alikes", text: [
        "eyJhbGciOiJIUzI1NiJ9 is only a header, no token.",
        "eyJub3QiOiJ0aGVyZSJ9.eyJ9.abc has no alg.",
        "eyJhbGciOiJIUzI1NiJ9.bm90IGpzb24.c2ln has a payload that is not JSON.",
        "eyJxxxxxxxxxxxx.yyyyyyyyyyyy.zzzz does not decode."
    ].join("\n")});
    return texts;
}

function sourceFiles(dir: string): string[] {
    return fs.readdirSync(dir, {withFileTypes: true}).flatMap((entry) => {
        const full = path.join(dir, entry.name);
        return entry.isDirectory() ? sourceFiles(full) : entry.name.endsWith(".ts") ? [full] : [];
    }).sort();
}

const prose: Record<string, string> = {
    english: `Hi Sam, the invoice 2026-11-0457 for 1,249.99 EUR is attached; please pay by 15 December.
Call me on +44 20 7946 0958 or +1 (415) 555-0132. The parcel tracking number is 1Z999AA10123456784,
the ISBN of the book is 978-3-16-148410-0, and the order was 4,532,015,112 units in total (no, really, a typo).
My password policy: at least twelve characters. The token ring network used 4 Mbit/s. Secret Santa is on Friday.
Timestamp 1733328000000 and build 20261204.1 passed; UUID 123e4567-e89b-12d3-a456-426614174000.`,
    german: `Sehr geehrte Frau Müller, Ihre Kundennummer lautet 4711-0815-2026, die Rechnungsnummer RE-2026-00042.
Bitte überweisen Sie 320,00 € bis zum 31.12.2026. Telefon: 030 1234 5678, Fax: 030 1234 5679. Postleitzahl 10115 Berlin.
Das Passwort für das WLAN steht auf dem Zettel in der Küche. Mit freundlichen Grüßen, Ihr Kundenservice.`,
    french: `Bonjour, votre commande n° 2026 1204 5567 a été expédiée. Numéro de suivi : 6A12345678901.
Le mot de passe doit contenir au moins 12 caractères. Tél. : 01 23 45 67 89. Montant : 1 234,56 €. À bientôt !`,
    spanish: `Hola Ana, la reunión es el 12/01/2027 a las 10:30. El número de expediente es 2026/000123-45.
Mi teléfono es +34 912 345 678. La contraseña del wifi la tiene Pedro. El presupuesto asciende a 15.400,00 euros.`,
    japanese: `お世話になっております。注文番号は 2026-1204-8891 です。お問い合わせは 03-1234-5678 までお願いします。
パスワードは12文字以上にしてください。合計金額は 12,800円 です。よろしくお願いいたします。`,
    russian: `Добрый день! Номер заказа 7700 1234 5678 90, сумма 4 500 руб. Телефон +7 495 123-45-67.
Пароль от почты не сообщайте никому. Встреча 5 декабря в 14:00.`,
    chinese: `您好，您的订单号是 2026120412345，快递单号 SF1234567890123。客服电话 400-820-8820。
请设置至少十二位的密码。总金额为 1,288.00 元。`,
    arabic: "مرحبا، رقم الطلب هو 2026-555-0199 والمبلغ 350 دولارا. رقم الهاتف +971 4 123 4567. لا تشارك كلمة المرور مع أحد."
};

const code: Record<string, string> = {
    ".env with placeholders": `# copy to .env and fill in
DATABASE_URL=postgres://localhost:5432/app
DB_PASSWORD=
API_KEY=\${API_KEY}
JWT_SECRET=changeme
SMTP_PASS=<your password>
GITHUB_TOKEN=$GITHUB_TOKEN
STRIPE_SECRET_KEY=sk_test_xxxxxxxxxxxxxxxxxxxxxxxx
MAX_TOKENS=4096
AWS_ACCOUNT_ID=123456789012
aws_account_id = "1234-5678-9012"
SECRET_KEY=your-secret-key-here
AUTH_TOKEN=***
`,
    "python": `import os
API_KEY = os.environ["API_KEY"]
PASSWORD = os.getenv("DB_PASSWORD", "")
TOKEN = settings.AUTH_TOKEN
def login(user, password):
    return hashlib.sha256(password.encode()).hexdigest()  # e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
`,
    "typescript": `const apiKey = process.env.OPENAI_API_KEY;
const token = await getToken({audience: "https://api.example.com"});
export const SECRET_HEADER = "x-secret";
const id = "550e8400-e29b-41d4-a716-446655440000";
const commit = "a07050f3b1c2d4e5f60718293a4b5c6d7e8f9012";
const pixel = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
`,
    "shell": `export PATH=/usr/local/bin:$PATH
export PASSWORD_FILE=/run/secrets/db_password
curl -H "Authorization: Bearer $TOKEN" https://api.example.com/v1/items
git clone https://github.com/example/repo.git
ssh-keygen -t ed25519 -C "me@example.com"
`,
    "docker compose": `services:
  db:
    image: postgres:16
    environment:
      POSTGRES_PASSWORD: \${POSTGRES_PASSWORD}
      POSTGRES_USER: app
  web:
    environment:
      - DATABASE_URL=postgres://app:\${POSTGRES_PASSWORD}@db:5432/app
`,
    "public key": `-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEWJ6Z3tdl9pJb1x0gVgoQnqFZTHeGVtkCpzA0cbGo5mQhl6BqYeO0sP1K2y2gJ3x9Q0mJ8Ab2fT8aVj6u0kK+Bw==
-----END PUBLIC KEY-----
ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl me@laptop`
};
