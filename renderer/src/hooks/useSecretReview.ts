import * as z from "zod";
import {errorDetailOf} from "../../../src/core/common/errors.js";
import {useQuestion} from "./useQuestion.js";
import {SecretFindingSchema, type SecretFinding} from "../../../src/core/common/secretScan/types.js";

/** What the user does with a cloud turn held back for its secrets. */
export type SecretsChoice = "redact" | "local" | "cancel";

/** Asks the user what to do with a cloud turn held back for the secrets it holds. */
export type ReviewSecrets = (findings: SecretFinding[]) => Promise<SecretsChoice>;

const FindingsSchema = z.array(SecretFindingSchema).min(1);

/** The findings of a cloud turn refused with SECRET_IN_CLOUD_REQUEST (kinds, places, masked previews), or null for any other error. */
export function secretFindingsOf(error: unknown): SecretFinding[] | null {
    return errorDetailOf(error, "SECRET_IN_CLOUD_REQUEST", "findings", FindingsSchema);
}

/**
 * The question of the Secrets found dialog: `review` opens it with the findings and resolves with
 * the user's choice once they make it; `pending` is what the dialog shows while it is open.
 */
export function useSecretReview() {
    const {pending, ask, answer} = useQuestion<SecretFinding[], SecretsChoice>("cancel");
    return {pending, review: ask satisfies ReviewSecrets, answer};
}
