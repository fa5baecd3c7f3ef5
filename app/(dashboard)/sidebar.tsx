"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import { signOut } from "next-auth/react";
import { useEffect, useState } from "react";
import { AccountSwitcher } from "./account-switcher";
import { useCan } from "./role-context";

/** Sections of the dashboard, in the order of the menu. */
/** Sections of the dashboard, in the order of the menu; `admin`: shown to owners and admins only (docs/team.md#roles). */
const sections: { label: string; href: string; admin?: true }[] = [
  { label: "Visão geral", href: "/overview" },
  { label: "Canais", href: "/channels" },
  { label: "Segmentos", href: "/segments" },
  { label: "Lançamentos", href: "/launches" },
  { label: "Campanhas", href: "/campaigns" },
  { label: "Números bloqueados", href: "/bloqueios" },
  { label: "Integrações", href: "/integrations", admin: true },
  { label: "Webhooks", href: "/webhooks", admin: true },
  { label: "Apps", href: "/apps", admin: true },
  { label: "Chaves de API", href: "/api-keys", admin: true },
  { label: "Configurações", href: "/settings" },
  { label: "Equipe", href: "/equipe", admin: true },
  { label: "Registro de atividades", href: "/atividades", admin: true },
  { label: "Conta", href: "/account" },
];

/**
 * The menu. On a phone (docs/dashboard.md#on-a-phone) it is a bar with the brand and a "Menu" button:
 * the links and the account open under it and close again once a page is chosen.
 */
export function Sidebar({ userName, userEmail }: { userName: string; userEmail: string }) {
  const pathname = usePathname();
  const [open, setOpen] = useState(false);
  const isAdmin = useCan("admin");
  // A new page closes the menu (a tap on the current page's link too, through onClick below).
  // biome-ignore lint/correctness/useExhaustiveDependencies: the pathname is the trigger, not a value read.
  useEffect(() => setOpen(false), [pathname]);
  return (
    <aside className={open ? "sidebar open" : "sidebar"}>
      <div className="sidebar-top">
        <Link href="/overview" className="brand">
          <span className="brand-mark" aria-hidden="true">
            ◆
          </span>{" "}
          Campanhas em Grupos
        </Link>
        <button type="button" className="btn btn-ghost menu-button" aria-expanded={open} aria-controls="sidebar-menu" onClick={() => setOpen(!open)}>
          <span aria-hidden="true">{open ? "✕" : "☰"}</span> Menu
        </button>
      </div>
      <div className="sidebar-menu" id="sidebar-menu">
        <nav aria-label="Navegação principal">
          <ul>
            {sections
              .filter((s) => isAdmin || !s.admin)
              .map((s) => (
                <li key={s.label}>
                  <Link
                    href={s.href}
                    className={pathname === s.href || pathname.startsWith(`${s.href}/`) ? "nav-link active" : "nav-link"}
                    aria-current={pathname === s.href ? "page" : undefined}
                    onClick={() => setOpen(false)}
                  >
                    {s.label}
                  </Link>
                </li>
              ))}
          </ul>
        </nav>
        <AccountSwitcher />
        <div className="sidebar-footer">
          <div className="user">
            <strong>{userName}</strong>
            <span className="muted">{userEmail}</span>
          </div>
          <button type="button" className="btn btn-ghost" onClick={() => signOut({ redirect: false }).then(() => window.location.assign("/login"))}>
            Sair
          </button>
        </div>
      </div>
    </aside>
  );
}
