"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import { signOut } from "next-auth/react";

/** Sections of the dashboard, in the order of the menu. */
const sections: { label: string; href: string }[] = [
  { label: "Canais", href: "/channels" },
  { label: "Segmentos", href: "/segments" },
  { label: "Lançamentos", href: "/launches" },
  { label: "Campanhas", href: "/campaigns" },
  { label: "Integrações", href: "/integrations" },
  { label: "Webhooks", href: "/webhooks" },
  { label: "Apps", href: "/apps" },
  { label: "Chaves de API", href: "/api-keys" },
  { label: "Configurações", href: "/settings" },
  { label: "Conta", href: "/account" },
];

export function Sidebar({ userName, userEmail }: { userName: string; userEmail: string }) {
  const pathname = usePathname();
  return (
    <aside className="sidebar">
      <div className="brand">
        <span className="brand-mark" aria-hidden="true">
          ◆
        </span>{" "}
        Campanhas em Grupos
      </div>
      <nav aria-label="Navegação principal">
        <ul>
          {sections.map((s) => (
            <li key={s.label}>
              <Link
                href={s.href}
                className={pathname === s.href || pathname.startsWith(`${s.href}/`) ? "nav-link active" : "nav-link"}
                aria-current={pathname === s.href ? "page" : undefined}
              >
                {s.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <div className="sidebar-footer">
        <div className="user">
          <strong>{userName}</strong>
          <span className="muted">{userEmail}</span>
        </div>
        <button type="button" className="btn btn-ghost" onClick={() => signOut({ redirect: false }).then(() => window.location.assign("/login"))}>
          Sair
        </button>
      </div>
    </aside>
  );
}
