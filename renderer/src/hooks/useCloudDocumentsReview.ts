import * as z from "zod";
import {useQuestion} from "./useQuestion.js";
import {errorDetailOf} from "../../../src/core/common/errors.js";

/** A document a cloud turn would send, as the core names it when it holds the turn back. */
export type CloudDocument = {name: string, bytes: number};

/** Asks the user whether a cloud turn may send these documents; resolves true only if they agree. */
export type ReviewCloudDocuments = (documents: CloudDocument[]) => Promise<boolean>;

const DocumentsSchema = z.array(z.object({name: z.string(), bytes: z.number()})).min(1);

/** The documents of a cloud turn refused with CLOUD_ATTACHMENTS_UNCONFIRMED, or null for any other error. */
export function cloudDocumentsOf(error: unknown): CloudDocument[] | null {
    return errorDetailOf(error, "CLOUD_ATTACHMENTS_UNCONFIRMED", "documents", DocumentsSchema);
}

/** The question of the Send documents to the cloud dialog: `review` opens it; `pending` is what it shows while open. */
export function useCloudDocumentsReview() {
    const {pending, ask, answer} = useQuestion<CloudDocument[], boolean>(false);
    return {pending, review: ask satisfies ReviewCloudDocuments, answer};
}
