import * as z from "zod";

/**
 * Every kind of secret the scan of outgoing cloud requests reports: an id (for `--allow-secret`
 * and the API's `secrets.allow`) and the name a person reads. `sources` names the secretlint
 * messages (`ruleId/messageId` of the recommended preset) reported as this kind; kinds without
 * one are Cleanroom's own rules (`findOwnSecrets`); `private-key` is both (the preset's PEM and
 * OpenSSH keys, and ours: every armored private key, `findArmoredPrivateKeys`).
 */
export const secretKinds = [
    {id: "private-key", name: "private key", sources: ["privatekey/PrivateKey", "gcp/PrivateKeyJSON", "gcp/PrivateKeyP12"]},
    {id: "aws-access-key", name: "AWS access key", sources: ["aws/AWSAccessKeyID"]},
    {id: "aws-secret-key", name: "AWS secret access key", sources: ["aws/AWSSecretAccessKey"]},
    {id: "github-token", name: "GitHub token", sources: ["github/GITHUB_TOKEN", "npm/PackageJSON_xOauthToken"]},
    {id: "gitlab-token", name: "GitLab token", sources: ["gitlab/GITLAB_PERSONAL_ACCESS_TOKEN"]},
    {id: "slack-token", name: "Slack token", sources: ["slack/SLACK_TOKEN"]},
    {id: "slack-webhook", name: "Slack webhook URL", sources: ["slack/IncomingWebhook"]},
    {id: "npm-token", name: "npm token", sources: ["npm/NPM_ACCESS_TOKEN", "npm/Npmrc_authToken"]},
    {id: "openai-key", name: "OpenAI API key", sources: ["openai/OPENAI_TOKEN"]},
    {id: "anthropic-key", name: "Anthropic API key", sources: ["anthropic/ANTHROPIC_API_KEY"]},
    {id: "groq-key", name: "Groq API key", sources: ["groq/GROQ_API_KEY"]},
    {id: "huggingface-token", name: "Hugging Face token", sources: ["huggingface/HUGGINGFACE_USER_ACCESS_TOKEN"]},
    {id: "sendgrid-key", name: "SendGrid API key", sources: ["sendgrid/SENDGRID_KEY"]},
    {id: "shopify-token", name: "Shopify token", sources: ["shopify/SHOPIFY_KEY"]},
    {id: "grafana-token", name: "Grafana token", sources: ["grafana/GRAFANA_CLOUD_API_TOKEN", "grafana/GRAFANA_SERVICE_ACCOUNT_TOKEN"]},
    {id: "linear-key", name: "Linear API key", sources: ["linear/LINEAR_API_TOKEN"]},
    {id: "notion-token", name: "Notion token", sources: ["notion/NOTION_INTEGRATION_TOKEN"]},
    {id: "1password-token", name: "1Password service account token", sources: ["1password/OPS_TOKEN"]},
    {id: "database-url", name: "database URL with a password", sources: [
        "database-connection-string/MongoDBConnection", "database-connection-string/MySQLConnection",
        "database-connection-string/PostgreSQLConnection"
    ]},
    {id: "url-password", name: "password in a URL", sources: ["basicauth/BasicAuth"]},
    {id: "vault-token", name: "HashiCorp Vault token", sources: [
        "hashicorp-vault/HASHICORP_VAULT_SERVICE_TOKEN", "hashicorp-vault/HASHICORP_VAULT_BATCH_TOKEN",
        "hashicorp-vault/HASHICORP_VAULT_RECOVERY_TOKEN"
    ]},
    {id: "vercel-token", name: "Vercel token", sources: [
        "vercel/VERCEL_PERSONAL_ACCESS_TOKEN", "vercel/VERCEL_INTEGRATION_TOKEN", "vercel/VERCEL_APP_ACCESS_TOKEN",
        "vercel/VERCEL_APP_REFRESH_TOKEN", "vercel/VERCEL_AI_GATEWAY_API_KEY"
    ]},
    {id: "databricks-token", name: "Databricks token", sources: ["databricks/DATABRICKS_PERSONAL_ACCESS_TOKEN"]},
    {id: "docker-token", name: "Docker access token", sources: ["docker/DOCKER_PERSONAL_ACCESS_TOKEN"]},
    {id: "figma-token", name: "Figma token", sources: ["figma/FIGMA_PERSONAL_ACCESS_TOKEN"]},
    {id: "stripe-key", name: "Stripe API key", sources: []},
    {id: "jwt", name: "JSON Web Token", sources: []},
    {id: "env-secret", name: "password or token", sources: []},
    {id: "card-number", name: "payment card number", sources: []},
    {id: "iban", name: "IBAN", sources: []},
    {id: "never-send", name: "never-send phrase", sources: []}
] as const satisfies ReadonlyArray<{id: string, name: string, sources: readonly string[]}>;

export type SecretKindId = typeof secretKinds[number]["id"];

export const SecretKindIdSchema = z.enum(secretKinds.map((kind) => kind.id) as [SecretKindId, ...SecretKindId[]]);

const byId = new Map<string, typeof secretKinds[number]>(secretKinds.map((kind) => [kind.id, kind]));
const bySource = new Map<string, SecretKindId>(secretKinds.flatMap((kind) => kind.sources.map((source) => [source, kind.id] as const)));

/** The name a person reads, e.g. "AWS access key". */
export function secretKindName(id: SecretKindId): string {
    return byId.get(id)!.name;
}

/** The kind of a secretlint message (`@secretlint/secretlint-rule-aws`, `AWSAccessKeyID`), or null for one not listed. */
export function secretKindOfSecretlint(ruleId: string, messageId: string | undefined): SecretKindId | null {
    return bySource.get(`${ruleId.replace(/^@secretlint\/secretlint-rule-/, "")}/${messageId ?? ""}`) ?? null;
}

/** A kind by its id or its name, any case ("aws-access-key", "AWS access key"); null when there is none. */
export function findSecretKind(idOrName: string): SecretKindId | null {
    const wanted = idOrName.trim().toLowerCase();
    return secretKinds.find((kind) => kind.id === wanted || kind.name.toLowerCase() === wanted)?.id ?? null;
}
