//! What `cargo xtask c-install PREFIX` lays out besides gex's own files:
//! the layout a build system configured for GASNet looks for.
//!
//! * `include/gasnet_config.h`: the release version macros (the values
//!   `gasnetex.h` defines) and gex's own version;
//! * `include/<conduit>-conduit/`: a small conduit header and the make
//!   fragments `<conduit>-{seq,par,parsync}.mak` (`GASNET_CC`,
//!   `GASNET_CPPFLAGS`, ... `GASNET_LIBS`);
//! * `lib/libgasnet-<conduit>-<mode>.a`: links to `libgex.a` (one library
//!   serves every conduit and thread mode: the conduit a job runs on is its
//!   launcher's) and `lib/pkgconfig/gasnet-<conduit>-<mode>.pc`;
//! * the tools library alone: `lib/libgasnet_tools-{seq,par}.a`,
//!   `include/gasnet_tools-{seq,par}.mak` (`GASNETTOOLS_*`) and
//!   `gasnet_tools-{seq,par}.pc`;
//! * launchers under GASNet's names in `bin/`: `gasnetrun_smp`,
//!   `gasnetrun_udp` and `amudprun`, shell scripts over `gex-run`.
//!
//! Everything here is text built from a [`Layout`]; `c_install` writes it.

use std::fmt::Write as _;

/// The conduits the layout has a directory, fragments and launchers for.
pub const CONDUITS: [&str; 2] = ["smp", "udp"];
/// The thread modes of the fragments, as in their file names.
pub const MODES: [&str; 3] = ["seq", "par", "parsync"];
/// The tools library's modes.
pub const TOOLS_MODES: [&str; 2] = ["seq", "par"];
/// The GASNet-EX release whose API gex matches, used when `gasnetex.h`
/// names none.
pub const DEFAULT_RELEASE: (u32, u32, u32) = (2025, 8, 0);
/// The system libraries a static Rust library needs (rustc's
/// `--print native-static-libs`, less `-lc`).
pub const SYSTEM_LIBS: &str = "-lgcc_s -lutil -lrt -lpthread -lm -ldl";
/// The launchers: (file name, conduit).
pub const LAUNCHERS: [(&str, &str); 3] = [
    ("gasnetrun_smp", "smp"),
    ("gasnetrun_udp", "udp"),
    ("amudprun", "udp"),
];

/// What the generated files depend on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// The install prefix, absolute.
    pub prefix: String,
    /// The C compiler clients use (`$CC` at install time, else `cc`).
    pub cc: String,
    /// The C++ compiler (`$CXX`, else `c++`).
    pub cxx: String,
    /// GASNET_RELEASE_VERSION_{MAJOR,MINOR,PATCH}.
    pub release: (u32, u32, u32),
    /// gex's version (`0.1.0`).
    pub gex_version: String,
}

/// The value of `#define NAME <number>` in a header, if it has one.
fn define_value(header: &str, name: &str) -> Option<u32> {
    header.lines().find_map(|line| {
        let rest = line.trim_start().strip_prefix('#')?.trim_start();
        let rest = rest.strip_prefix("define")?;
        let mut words = rest.split_whitespace();
        if words.next()? != name {
            return None;
        }
        words
            .next()?
            .trim_end_matches(['u', 'U', 'l', 'L'])
            .parse()
            .ok()
    })
}

/// GASNET_RELEASE_VERSION_{MAJOR,MINOR,PATCH} as `gasnetex.h` defines them,
/// so that `gasnet_config.h` always agrees with it.
pub fn release_from_header(header: &str) -> Option<(u32, u32, u32)> {
    Some((
        define_value(header, "GASNET_RELEASE_VERSION_MAJOR")?,
        define_value(header, "GASNET_RELEASE_VERSION_MINOR")?,
        define_value(header, "GASNET_RELEASE_VERSION_PATCH")?,
    ))
}

fn version_parts(version: &str) -> (u32, u32, u32) {
    let mut parts = version
        .split(['.', '-', '+'])
        .map(|p| p.parse::<u32>().unwrap_or(0));
    (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    )
}

/// The preprocessor symbol of a thread mode.
pub fn mode_define(mode: &str) -> String {
    format!("GASNET_{}", mode.to_uppercase())
}

impl Layout {
    pub fn include_dir(&self) -> String {
        format!("{}/include", self.prefix)
    }

    pub fn lib_dir(&self) -> String {
        format!("{}/lib", self.prefix)
    }

    fn release_str(&self) -> String {
        let (a, b, c) = self.release;
        format!("{a}.{b}.{c}")
    }

    /// `include/gasnet_config.h`.
    pub fn gasnet_config_h(&self) -> String {
        let (major, minor, patch) = self.release;
        let (gmaj, gmin, gpat) = version_parts(&self.gex_version);
        let mut out = String::new();
        let _ = writeln!(
            out,
            "/* gasnet_config.h: the configuration of this gex installation, written by\n \
             * `cargo xtask c-install`. gex {} implements the API of GASNet-EX {}; the\n \
             * release numbers are the ones gasnetex.h defines. */",
            self.gex_version,
            self.release_str()
        );
        out += "#ifndef GEX_GASNET_CONFIG_H\n#define GEX_GASNET_CONFIG_H\n\n";
        let defines: [(&str, String); 8] = [
            ("GASNET_RELEASE_VERSION_MAJOR", major.to_string()),
            ("GASNET_RELEASE_VERSION_MINOR", minor.to_string()),
            ("GASNET_RELEASE_VERSION_PATCH", patch.to_string()),
            ("GEX_VERSION_MAJOR", gmaj.to_string()),
            ("GEX_VERSION_MINOR", gmin.to_string()),
            ("GEX_VERSION_PATCH", gpat.to_string()),
            ("GEX_VERSION_STR", format!("\"{}\"", self.gex_version)),
            (
                "GEX_GASNET_RELEASE_STR",
                format!("\"{}\"", self.release_str()),
            ),
        ];
        for (name, value) in defines {
            let _ = writeln!(out, "#ifndef {name}\n#define {name} {value}\n#endif");
        }
        out += "\n#endif /* GEX_GASNET_CONFIG_H */\n";
        out
    }

    /// `include/<conduit>-conduit/gasnet_core_fwd.h`: names the conduit
    /// whose directory is on the include path.
    pub fn conduit_header(&self, conduit: &str) -> String {
        let uc = conduit.to_uppercase();
        let mut out = format!(
            "/* gasnet_core_fwd.h: the {conduit} conduit of gex, written by `cargo xtask\n \
             * c-install`. One library serves every conduit: this directory is on the\n \
             * include path of the {conduit}-*.mak fragments and gasnet-{conduit}-*.pc files,\n \
             * which also define GASNET_CONDUIT_{uc}; the conduit a job runs on is its\n \
             * launcher's (gasnetrun_{conduit}, or gex-run --conduit {conduit}). */\n"
        );
        let _ = write!(
            out,
            "#ifndef GEX_CONDUIT_{uc}_FWD_H\n#define GEX_CONDUIT_{uc}_FWD_H\n\n"
        );
        for (name, value) in [
            (format!("GASNET_CONDUIT_{uc}"), "1".to_string()),
            ("GASNET_CORE_NAME".to_string(), uc.clone()),
            ("GASNET_CORE_NAME_STR".to_string(), format!("\"{uc}\"")),
        ] {
            let _ = writeln!(out, "#ifndef {name}\n#define {name} {value}\n#endif");
        }
        let _ = writeln!(out, "\n#endif");
        out
    }

    /// The variables of a conduit's fragment, fully expanded, in the order
    /// they are written. Those the fragment writes as references to others
    /// are listed in [`COMPOSITES`].
    pub fn conduit_vars(&self, conduit: &str, mode: &str) -> Vec<(&'static str, String)> {
        let inc = self.include_dir();
        let defines = format!(
            "-D{} -DGASNET_CONDUIT_{}",
            mode_define(mode),
            conduit.to_uppercase()
        );
        let includes = format!("-I{inc} -I{inc}/{conduit}-conduit");
        let misc_cpp = "-D_GNU_SOURCE=1".to_string();
        let opt = "-O2".to_string();
        vec![
            ("GASNET_PREFIX", self.prefix.clone()),
            ("GASNET_CONDUIT_NAME", conduit.to_string()),
            ("GASNET_THREAD_MODEL", mode.to_uppercase()),
            ("GASNET_CC", self.cc.clone()),
            ("GASNET_CXX", self.cxx.clone()),
            ("GASNET_LD", self.cc.clone()),
            ("GASNET_DEFINES", defines.clone()),
            ("GASNET_INCLUDES", includes.clone()),
            ("GASNET_MISC_CPPFLAGS", misc_cpp.clone()),
            ("GASNET_MISC_CXXCPPFLAGS", misc_cpp.clone()),
            ("GASNET_OPT_CFLAGS", opt.clone()),
            ("GASNET_MISC_CFLAGS", String::new()),
            ("GASNET_OPT_CXXFLAGS", opt.clone()),
            ("GASNET_MISC_CXXFLAGS", String::new()),
            ("GASNET_DEVWARN_CFLAGS", String::new()),
            ("GASNET_DEVWARN_CXXFLAGS", String::new()),
            (
                "GASNET_CPPFLAGS",
                format!("{misc_cpp} {defines} {includes}"),
            ),
            ("GASNET_CFLAGS", opt.clone()),
            (
                "GASNET_CXXCPPFLAGS",
                format!("{misc_cpp} {defines} {includes}"),
            ),
            ("GASNET_CXXFLAGS", opt),
            ("GASNET_LDFLAGS", String::new()),
            ("GASNET_THREAD_LIBS", "-lpthread".to_string()),
            (
                "GASNET_LIBS",
                format!(
                    "-L{} -lgasnet-{conduit}-{mode} {SYSTEM_LIBS}",
                    self.lib_dir()
                ),
            ),
        ]
    }

    /// `include/<conduit>-conduit/<conduit>-<mode>.mak`.
    pub fn conduit_mak(&self, conduit: &str, mode: &str) -> String {
        let mut out = format!(
            "# {conduit}-{mode}.mak: how to compile and link a GASNet client against gex\n\
             # ({conduit} conduit, {model} mode). Written by `cargo xtask c-install`; gex {gex}\n\
             # implements the API of GASNet-EX {release}. Use it from a Makefile:\n\
             #\n\
             #   include {prefix}/include/{conduit}-conduit/{conduit}-{mode}.mak\n\
             #   prog: prog.c\n\
             #   \t$(GASNET_CC) $(GASNET_CPPFLAGS) $(GASNET_CFLAGS) -c -o prog.o prog.c\n\
             #   \t$(GASNET_LD) $(GASNET_LDFLAGS) -o prog prog.o $(GASNET_LIBS)\n\
             #\n\
             # and run the program with {prefix}/bin/gasnetrun_{conduit} -n N ./prog.\n\
             # libgasnet-{conduit}-{mode}.a is libgex.a: one library serves every conduit\n\
             # and thread mode, and the conduit a job runs on is its launcher's.\n\n",
            model = mode_define(mode),
            gex = self.gex_version,
            release = self.release_str(),
            prefix = self.prefix,
        );
        write_mak_vars(&mut out, &self.conduit_vars(conduit, mode), "GASNET_PREFIX");
        out
    }

    /// `lib/pkgconfig/gasnet-<conduit>-<mode>.pc`: the fragment's variables
    /// (`pkg-config --variable=GASNET_CC`), with `--cflags` the
    /// preprocessor and compiler flags and `--libs` the link flags.
    pub fn conduit_pc(&self, conduit: &str, mode: &str) -> String {
        let vars = self.conduit_vars(conduit, mode);
        let mut out = format!(
            "# gasnet-{conduit}-{mode}: gex's C interface as a GASNet-EX {release} client\n\
             # builds with it ({conduit} conduit, {model}). Written by `cargo xtask c-install`.\n",
            release = self.release_str(),
            model = mode_define(mode),
        );
        write_pc_head(&mut out, &self.prefix);
        for (name, value) in vars.iter().filter(|(n, _)| *n != "GASNET_PREFIX") {
            let _ = writeln!(out, "{name}={}", self.pc_relative(value));
        }
        let _ = write!(
            out,
            "\nName: gasnet-{conduit}-{mode}\n\
             Description: gex (GASNet-EX in Rust) for GASNet clients: {conduit} conduit, {model}\n\
             Version: {release}\n\
             Cflags: ${{GASNET_CPPFLAGS}} ${{GASNET_CFLAGS}}\n\
             Libs: ${{GASNET_LDFLAGS}} ${{GASNET_LIBS}}\n",
            model = mode_define(mode),
            release = self.release_str(),
        );
        out
    }

    /// The tools library's variables, fully expanded.
    pub fn tools_vars(&self, mode: &str) -> Vec<(&'static str, String)> {
        let thread = if mode == "par" {
            "-DGASNETT_THREAD_SAFE=1"
        } else {
            "-DGASNETT_THREAD_SINGLE=1"
        };
        vec![
            ("GASNETTOOLS_PREFIX", self.prefix.clone()),
            ("GASNETTOOLS_CC", self.cc.clone()),
            ("GASNETTOOLS_CXX", self.cxx.clone()),
            ("GASNETTOOLS_LD", self.cc.clone()),
            (
                "GASNETTOOLS_CPPFLAGS",
                format!("-D_GNU_SOURCE=1 {thread} -I{}", self.include_dir()),
            ),
            ("GASNETTOOLS_CFLAGS", "-O2".to_string()),
            ("GASNETTOOLS_CXXFLAGS", "-O2".to_string()),
            ("GASNETTOOLS_LDFLAGS", String::new()),
            (
                "GASNETTOOLS_LIBS",
                format!("-L{} -lgasnet_tools-{mode} {SYSTEM_LIBS}", self.lib_dir()),
            ),
            ("GASNETTOOLS_TOOLLIB_NAME", format!("gasnet_tools-{mode}")),
        ]
    }

    /// `include/gasnet_tools-<mode>.mak`.
    pub fn tools_mak(&self, mode: &str) -> String {
        let mut out = format!(
            "# gasnet_tools-{mode}.mak: how to build a client of the GASNet tools alone\n\
             # (gasnet_tools.h, {what}) against gex's tools library, without the\n\
             # communication library. Written by `cargo xtask c-install`. From a Makefile:\n\
             #\n\
             #   include {prefix}/include/gasnet_tools-{mode}.mak\n\
             #   prog: prog.c\n\
             #   \t$(GASNETTOOLS_CC) $(GASNETTOOLS_CPPFLAGS) $(GASNETTOOLS_CFLAGS) -c -o prog.o prog.c\n\
             #   \t$(GASNETTOOLS_LD) $(GASNETTOOLS_LDFLAGS) -o prog prog.o $(GASNETTOOLS_LIBS)\n\n",
            what = if mode == "par" {
                "thread-safe: GASNETT_THREAD_SAFE"
            } else {
                "single-threaded: GASNETT_THREAD_SINGLE"
            },
            prefix = self.prefix,
        );
        write_mak_vars(&mut out, &self.tools_vars(mode), "GASNETTOOLS_PREFIX");
        out
    }

    /// `lib/pkgconfig/gasnet_tools-<mode>.pc`.
    pub fn tools_pc(&self, mode: &str) -> String {
        let mut out = format!(
            "# gasnet_tools-{mode}: the GASNet tools library of gex alone. Written by\n\
             # `cargo xtask c-install`.\n"
        );
        write_pc_head(&mut out, &self.prefix);
        for (name, value) in self
            .tools_vars(mode)
            .iter()
            .filter(|(n, _)| *n != "GASNETTOOLS_PREFIX")
        {
            let _ = writeln!(out, "{name}={}", self.pc_relative(value));
        }
        let _ = write!(
            out,
            "\nName: gasnet_tools-{mode}\n\
             Description: gex's GASNet tools library ({})\n\
             Version: {}\n\
             Cflags: ${{GASNETTOOLS_CPPFLAGS}} ${{GASNETTOOLS_CFLAGS}}\n\
             Libs: ${{GASNETTOOLS_LDFLAGS}} ${{GASNETTOOLS_LIBS}}\n",
            if mode == "par" {
                "thread-safe"
            } else {
                "single-threaded"
            },
            self.release_str(),
        );
        out
    }

    /// A value with the install directories written as the .pc file's
    /// variables, so that `pkg-config --define-prefix` can move them.
    fn pc_relative(&self, value: &str) -> String {
        value
            .replace(&self.include_dir(), "${includedir}")
            .replace(&self.lib_dir(), "${libdir}")
            .replace(&self.prefix, "${prefix}")
    }
}

/// The variables of a fragment written as references to the finer ones
/// (what the composite is made of), as GASNet's fragments define them.
pub const COMPOSITES: &[(&str, &str)] = &[
    (
        "GASNET_CPPFLAGS",
        "$(GASNET_MISC_CPPFLAGS) $(GASNET_DEFINES) $(GASNET_INCLUDES)",
    ),
    (
        "GASNET_CFLAGS",
        "$(GASNET_OPT_CFLAGS) $(GASNET_MISC_CFLAGS)",
    ),
    (
        "GASNET_CXXCPPFLAGS",
        "$(GASNET_MISC_CXXCPPFLAGS) $(GASNET_DEFINES) $(GASNET_INCLUDES)",
    ),
    (
        "GASNET_CXXFLAGS",
        "$(GASNET_OPT_CXXFLAGS) $(GASNET_MISC_CXXFLAGS)",
    ),
];

/// Writes `NAME = value` lines: composites as references, the prefix once
/// and every other value through `$(prefix_var)`.
fn write_mak_vars(out: &mut String, vars: &[(&'static str, String)], prefix_var: &str) {
    let prefix = vars
        .iter()
        .find(|(n, _)| *n == prefix_var)
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    for (name, value) in vars {
        let text = if let Some((_, refs)) = COMPOSITES.iter().find(|(n, _)| n == name) {
            refs.to_string()
        } else if *name == prefix_var || prefix.is_empty() {
            value.clone()
        } else {
            value.replace(&prefix, &format!("$({prefix_var})"))
        };
        if text.is_empty() {
            let _ = writeln!(out, "{name} =");
        } else {
            let _ = writeln!(out, "{name} = {text}");
        }
    }
}

fn write_pc_head(out: &mut String, prefix: &str) {
    let _ = write!(
        out,
        "prefix={prefix}\n\
         exec_prefix=${{prefix}}\n\
         libdir=${{exec_prefix}}/lib\n\
         includedir=${{prefix}}/include\n"
    );
}

/// A launcher script under GASNet's name over `gex-run` (in the same
/// directory as the script, through symbolic links too).
pub fn launcher_script(name: &str, conduit: &str) -> String {
    format!(
        r#"#!/bin/sh
# {name}: starts a GASNet client of gex on the {conduit} conduit, as
#   gex-run -n N --conduit {conduit} -- PROGRAM ARGS...
# (gex-run is installed beside this script). Written by `cargo xtask c-install`.
#
# usage: {name} -n N [options] [--] PROGRAM [ARGS...]
#   -n N, -np N   the number of processes (ranks)
#   -v            print the gex-run command line (on standard error), then run it
#   -t            print the gex-run command line and run nothing
#   -c N, -N N, -E VARS, -k, -spawner=NAME
#                 accepted and ignored: the job runs on this host, and every
#                 rank gets the whole environment
#   --            ends the options
# The exit code is the job's (gex-run's). Settings reach the ranks through
# the environment (GEX_RUN_TIMEOUT ends a job that runs too long, GEX_UDP_*).
me={name}
conduit={conduit}
self=$(readlink -f -- "$0" 2>/dev/null) || self=$0
here=$(dirname -- "$self")
usage() {{
    echo "usage: $me -n N [-v] [-t] [--] PROGRAM [ARGS...]"
}}
fail() {{
    echo "$me: $*" >&2
    usage >&2
    exit 2
}}
n=
verbose=0
dry=0
while [ $# -gt 0 ]; do
    case $1 in
        -n | -np)
            [ $# -ge 2 ] || fail "$1 needs a value"
            n=$2
            shift 2
            ;;
        -n=* | -np=*) n=${{1#*=}}; shift ;;
        -np[0-9]*) n=${{1#-np}}; shift ;;
        -n[0-9]*) n=${{1#-n}}; shift ;;
        -c | -N | -E)
            [ $# -ge 2 ] || fail "$1 needs a value"
            shift 2
            ;;
        -k | -spawner=*) shift ;;
        -v) verbose=1; shift ;;
        -t) verbose=1; dry=1; shift ;;
        -h | -help | --help) usage; exit 0 ;;
        --) shift; break ;;
        -*) fail "unknown option $1" ;;
        *) break ;;
    esac
done
case $n in
    '') fail "the number of processes (-n N) is required" ;;
    *[!0-9]*) fail "-n expects a number, got '$n'" ;;
esac
[ $# -ge 1 ] || fail "no program given"
if [ "$verbose" = 1 ]; then
    echo "$me: $here/gex-run -n $n --conduit $conduit -- $*" >&2
fi
[ "$dry" = 1 ] && exit 0
exec "$here/gex-run" -n "$n" --conduit "$conduit" -- "$@"
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::mak;

    fn layout() -> Layout {
        Layout {
            prefix: "/opt/gex".into(),
            cc: "cc".into(),
            cxx: "c++".into(),
            release: (2025, 8, 0),
            gex_version: "0.1.0".into(),
        }
    }

    #[test]
    fn release_is_read_from_the_header() {
        let header = "#define GASNET_RELEASE_VERSION_MAJOR 2025\n\
                      #  define GASNET_RELEASE_VERSION_MINOR 8\n\
                      #define GASNET_RELEASE_VERSION_PATCH 0 /* x */\n\
                      #define GASNET_RELEASE_VERSION_MAJORX 7\n";
        assert_eq!(release_from_header(header), Some((2025, 8, 0)));
        assert_eq!(release_from_header("#define X 1"), None);
    }

    #[test]
    fn gasnet_config_guards_every_macro() {
        let text = layout().gasnet_config_h();
        for (name, value) in [
            ("GASNET_RELEASE_VERSION_MAJOR", "2025"),
            ("GASNET_RELEASE_VERSION_MINOR", "8"),
            ("GASNET_RELEASE_VERSION_PATCH", "0"),
            ("GEX_VERSION_MAJOR", "0"),
            ("GEX_VERSION_MINOR", "1"),
            ("GEX_VERSION_STR", "\"0.1.0\""),
        ] {
            assert!(
                text.contains(&format!("#ifndef {name}\n#define {name} {value}\n#endif")),
                "{name}:\n{text}"
            );
        }
    }

    #[test]
    fn conduit_fragment_expands_to_its_variables() {
        let l = layout();
        for conduit in CONDUITS {
            for mode in MODES {
                let text = l.conduit_mak(conduit, mode);
                let vars = mak::parse(&text);
                for (name, value) in l.conduit_vars(conduit, mode) {
                    assert_eq!(
                        mak::normalize(&vars.get(name)),
                        mak::normalize(&value),
                        "{conduit}-{mode}: {name}"
                    );
                }
            }
        }
        let vars = mak::parse(&l.conduit_mak("udp", "par"));
        assert_eq!(
            vars.get("GASNET_CPPFLAGS"),
            "-D_GNU_SOURCE=1 -DGASNET_PAR -DGASNET_CONDUIT_UDP \
             -I/opt/gex/include -I/opt/gex/include/udp-conduit"
        );
        assert_eq!(
            vars.get("GASNET_LIBS"),
            format!("-L/opt/gex/lib -lgasnet-udp-par {SYSTEM_LIBS}")
        );
        // What tests/Makefile.in's rules use is all there.
        for name in [
            "GASNET_CC",
            "GASNET_CXX",
            "GASNET_LD",
            "GASNET_LDFLAGS",
            "GASNET_MISC_CFLAGS",
            "GASNET_DEVWARN_CFLAGS",
            "GASNET_DEVWARN_CXXFLAGS",
            "GASNET_THREAD_LIBS",
        ] {
            assert!(vars.defines(name), "{name}");
        }
    }

    #[test]
    fn pc_files_carry_the_fragment_values() {
        let l = layout();
        let text = l.conduit_pc("smp", "seq");
        assert!(text.contains("prefix=/opt/gex\n"));
        assert!(text.contains("Name: gasnet-smp-seq\n"));
        assert!(text.contains("Version: 2025.8.0\n"));
        assert!(text.contains(
            "GASNET_CPPFLAGS=-D_GNU_SOURCE=1 -DGASNET_SEQ -DGASNET_CONDUIT_SMP \
             -I${includedir} -I${includedir}/smp-conduit\n"
        ));
        assert!(text.contains("GASNET_LIBS=-L${libdir} -lgasnet-smp-seq"));
        assert!(text.contains("Cflags: ${GASNET_CPPFLAGS} ${GASNET_CFLAGS}\n"));
        assert!(text.contains("GASNET_CC=cc\n"));
        let tools = l.tools_pc("par");
        assert!(tools.contains("-DGASNETT_THREAD_SAFE=1"));
        assert!(tools.contains("-lgasnet_tools-par"));
    }

    #[test]
    fn tools_fragments() {
        let l = layout();
        let seq = mak::parse(&l.tools_mak("seq"));
        assert!(seq
            .get("GASNETTOOLS_CPPFLAGS")
            .contains("-DGASNETT_THREAD_SINGLE=1"));
        assert!(seq
            .get("GASNETTOOLS_LIBS")
            .starts_with("-L/opt/gex/lib -lgasnet_tools-seq "));
        let par = mak::parse(&l.tools_mak("par"));
        assert!(par
            .get("GASNETTOOLS_CPPFLAGS")
            .contains("-DGASNETT_THREAD_SAFE=1"));
        for name in [
            "GASNETTOOLS_CC",
            "GASNETTOOLS_CXX",
            "GASNETTOOLS_LD",
            "GASNETTOOLS_CFLAGS",
            "GASNETTOOLS_CXXFLAGS",
            "GASNETTOOLS_LDFLAGS",
        ] {
            assert!(par.defines(name), "{name}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn launcher_scripts_map_to_gex_run() {
        use std::os::unix::fs::PermissionsExt;
        use std::process::Command;
        let dir = std::env::temp_dir().join(format!("xtask-launcher-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // A stand-in gex-run that prints its arguments.
        let fake = dir.join("gex-run");
        std::fs::write(
            &fake,
            "#!/bin/sh\nfor a in \"$@\"; do echo \"[$a]\"; done\n",
        )
        .unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let script = dir.join("gasnetrun_udp");
        std::fs::write(&script, launcher_script("gasnetrun_udp", "udp")).unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let run = |args: &[&str]| {
            let out = Command::new(&script).args(args).output().unwrap();
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stdout).into_owned(),
            )
        };
        let expected = "[-n]\n[3]\n[--conduit]\n[udp]\n[--]\n[./prog]\n[a b]\n[-n]\n";
        assert_eq!(
            run(&["-n", "3", "./prog", "a b", "-n"]),
            (Some(0), expected.into())
        );
        assert_eq!(run(&["-np", "3", "--", "./prog", "a b", "-n"]).1, expected);
        assert_eq!(
            run(&["-np3", "-v", "-E", "X,Y", "./prog", "a b", "-n"]).1,
            expected
        );
        assert_eq!(run(&["-n", "3", "-t", "./prog"]), (Some(0), String::new()));
        assert_eq!(run(&["./prog"]).0, Some(2));
        assert_eq!(run(&["-n", "x", "./prog"]).0, Some(2));
        assert_eq!(run(&["-n", "2"]).0, Some(2));
        assert_eq!(run(&["-q", "-n", "2", "./prog"]).0, Some(2));
        // Through a symbolic link elsewhere, gex-run is still found.
        let link_dir = dir.join("elsewhere");
        std::fs::create_dir_all(&link_dir).unwrap();
        let link = link_dir.join("amudprun");
        std::os::unix::fs::symlink(&script, &link).unwrap();
        let out = Command::new(&link)
            .args(["-np", "2", "p"])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "[-n]\n[2]\n[--conduit]\n[udp]\n[--]\n[p]\n"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
