import {useCallback, useState} from "react";
import {describeError, type BannerKind} from "../describeError.js";

export type Banner = {id: string, kind: BannerKind, title: string, detail: string};

/** The stack of banners above the chat; one per distinct message, newest last. */
export function useBanners() {
    const [banners, setBanners] = useState<Banner[]>([]);

    const show = useCallback((banner: Omit<Banner, "id"> & {id?: string}) => {
        const id = banner.id ?? `${banner.title}:${banner.detail}`;
        setBanners((current) => [...current.filter((existing) => existing.id !== id), {...banner, id}]);
    }, []);
    const showError = useCallback((error: unknown) => show(describeError(error)), [show]);
    const dismiss = useCallback((id: string) => setBanners((current) => current.filter((banner) => banner.id !== id)), []);

    return {banners, show, showError, dismiss};
}
