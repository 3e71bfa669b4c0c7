import type {Banner} from "../hooks/useBanners.js";

/** Every error and notice the core reported, until dismissed. */
export function BannerStack({banners, onDismiss}: {banners: Banner[], onDismiss: (id: string) => void}) {
    if (banners.length === 0)
        return null;

    return (
        <div className="banners">
            {banners.map((banner) => (
                <div key={banner.id} className={`banner banner-${banner.kind}`} role={banner.kind === "error" ? "alert" : "status"}>
                    <div className="banner-text">
                        <strong>{banner.title}</strong>
                        <span>{banner.detail}</span>
                    </div>
                    <button type="button" className="icon-button" aria-label={`Dismiss: ${banner.title}`} onClick={() => onDismiss(banner.id)}>×</button>
                </div>
            ))}
        </div>
    );
}
