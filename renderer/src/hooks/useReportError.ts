import {useEffect, useRef} from "react";

/** Reports a query's failure once (each new failure once), through the app's banners. */
export function useReportError(error: unknown, onError: (error: unknown) => void) {
    const latest = useRef(onError);
    latest.current = onError;
    useEffect(() => {
        if (error != null)
            latest.current(error);
    }, [error]);
}
