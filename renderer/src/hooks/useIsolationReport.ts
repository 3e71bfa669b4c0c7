import {useCallback, useEffect, useRef, useState} from "react";
import type {IsolationReport} from "../../../src/core/common/api/index.js";
import type {AppCoreClient} from "../transport/AppCoreClient.js";
import {useCoreEvent} from "./useCoreEvent.js";

const refreshDelayMs = 250;

/** The open conversation's isolation report, refreshed shortly after each of its audit events. */
export function useIsolationReport(client: AppCoreClient, conversationId: string | null) {
    const [report, setReport] = useState<IsolationReport | null>(null);
    const timer = useRef<ReturnType<typeof setTimeout> | null>(null);

    const refresh = useCallback(async () => {
        if (conversationId == null) {
            setReport(null);
            return;
        }
        try {
            setReport(await client.call("isolation.report", {conversationId}));
        } catch {
            setReport(null);
        }
    }, [client, conversationId]);

    useEffect(() => {
        setReport(null);
        void refresh();
        return () => {
            if (timer.current != null)
                clearTimeout(timer.current);
        };
    }, [refresh]);

    const refreshSoon = useCallback(() => {
        if (timer.current != null)
            clearTimeout(timer.current);
        timer.current = setTimeout(() => void refresh(), refreshDelayMs);
    }, [refresh]);

    useCoreEvent(client, "audit.event", (event) => {
        if (event.conversationId === conversationId)
            refreshSoon();
    });

    return {report, refresh};
}
