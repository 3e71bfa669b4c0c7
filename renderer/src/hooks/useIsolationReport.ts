import {useQuery} from "@tanstack/react-query";
import {isolationQuery} from "../queries/coreQueries.js";
import type {AppCoreClient} from "../transport/AppCoreClient.js";
import {useConnected} from "./useConnected.js";

/** The open conversation's isolation report: the `isolation` query of its id, asked again after each of its audit events. */
export function useIsolationReport(client: AppCoreClient, conversationId: string | null) {
    const report = useQuery(isolationQuery(client, conversationId, useConnected(client)));
    return {report: conversationId != null ? report.data ?? null : null};
}
