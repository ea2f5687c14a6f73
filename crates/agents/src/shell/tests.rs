//! The shell reader's unit tests: what it reads, writes and discards.

use super::git::*;
use super::read::*;
use super::write::*;
use super::*;
use crate::event::{Edits, Extent, Printed, Replace, ShownText};

fn r(path: &str, lines: Lines, numbered: bool) -> Option<Read> {
    Some(Read {
        path: path.into(),
        dir: None,
        lines,
        numbered,
        before: String::new(),
        after: String::new(),
    })
}

#[test]
fn reads_it_understands() {
    assert_eq!(read("cat a.txt"), r("a.txt", Lines::All, false));
    assert_eq!(
        read("cat 'my file.txt'"),
        r("my file.txt", Lines::All, false)
    );
    assert_eq!(
        read("cat my\\ file.txt"),
        r("my file.txt", Lines::All, false)
    );
    assert_eq!(read("cat -n a.txt"), r("a.txt", Lines::All, true));
    assert_eq!(read("nl -ba src/x.rs"), r("src/x.rs", Lines::All, true));
    let range = |from, to| Lines::Range { from, to };
    assert_eq!(
        read("sed -n '1,5p' a.txt"),
        r("a.txt", range(1, Some(5)), false)
    );
    assert_eq!(
        read("sed -n 7p a.txt"),
        r("a.txt", range(7, Some(7)), false)
    );
    assert_eq!(
        read("sed -n '3,$p' a.txt"),
        r("a.txt", range(3, None), false)
    );
    assert_eq!(
        read("nl -ba a.txt | sed -n '3,6p'"),
        r("a.txt", range(3, Some(6)), true)
    );
    assert_eq!(read("head a.txt"), r("a.txt", Lines::Head(10), false));
    assert_eq!(read("head -n 3 a.txt"), r("a.txt", Lines::Head(3), false));
    assert_eq!(read("head -20 a.txt"), r("a.txt", Lines::Head(20), false));
    assert_eq!(read("tail -n 2 a.txt"), r("a.txt", Lines::Tail(2), false));
    assert_eq!(
        read("tail -n +40 a.txt"),
        r("a.txt", range(40, None), false)
    );
    for cmd in [
        "cd src && cat x.rs",
        "cd src&&cat x.rs",
        "cd \"src\" && cat x.rs",
    ] {
        assert_eq!(
            read(cmd),
            Some(Read {
                dir: Some("src".into()),
                ..r("x.rs", Lines::All, false).unwrap()
            }),
            "{cmd}"
        );
    }
}

/// Issue 44, item 3: a read inside a list whose other output is known.
#[test]
fn reads_inside_a_list() {
    let with = |cmd: &str, dir: Option<&str>, before: &str, after: &str| {
        assert_eq!(
            read(cmd),
            Some(Read {
                dir: dir.map(Into::into),
                before: before.into(),
                after: after.into(),
                ..r("f", Lines::All, false).unwrap()
            }),
            "{cmd}"
        );
    };
    with("gen > f && cat f", None, "", "");
    with("./gen.sh --out x > f 2>&1 && cat f", None, "", "");
    with("make gen | sort > f; cat f", None, "", "");
    with("cd d && cat f", Some("d"), "", "");
    with("cd d && cd e\ncat f", Some("d/e"), "", "");
    with("cat f; echo done", None, "", "done\n");
    with("echo '--- f' && cat f && echo", None, "--- f\n", "\n");
    with("mkdir -p d > /dev/null; true; cat f; :", None, "", "");
}

#[test]
fn nothing_from_what_it_does_not_understand() {
    for c in [
        "cat a.txt b.txt",
        "cat *.txt",
        "cat $F",
        "cat a.txt > b.txt",
        "cat a.txt; rm a.txt",
        "sed -n '1,5p;10p' a.txt",
        "sed -i 's/a/b/' a.txt",
        "sed -n '5,1p' a.txt",
        "head -c 10 a.txt",
        "grep -n x a.txt",
        "cat a.txt | head",
        "sed -n '1,5p' a.txt | nl -ba",
        "cat \"$HOME/a\"",
        "cat ~/a",
        "ls && cat a",
        "cd - && cat a",
        "gen > f || cat f",
        "gen > f & cat f",
        "cat a; cat b",
        "cat a && ls",
        "cat a; echo -n x",
        "gen > /dev/stdout && cat f",
        "gen >&2 && cat f",
        "exec > log && cat f",
        "if true; then cd x; fi; cat f",
        "cat -",
        "X=1 cat a",
        "! cat a",
        "cat 'unterminated",
        "",
    ] {
        assert_eq!(read(c), None, "{c}");
    }
}

fn w(path: &str, how: How) -> Write {
    Write {
        path: path.into(),
        how,
        into: None,
        text: None,
        from: None,
        background: false,
        link: None,
        edit: None,
    }
}

/// A copy of the file `name` onto `path`.
fn into(path: &str, name: &str) -> Write {
    Write {
        into: Some(name.into()),
        from: Some(name.into()),
        ..w(path, How::Whole)
    }
}

fn from(mut w: Write, source: &str) -> Write {
    w.from = Some(source.into());
    w
}

/// A write that replaces a symlink at its destination.
fn link(mut w: Write, makes: bool, even_to_dir: bool) -> Write {
    w.link = Some(Link {
        makes,
        even_to_dir,
        ..Link::default()
    });
    w
}

/// A move: the source's text goes there.
fn moved(mut w: Write) -> Write {
    w.link = Some(Link {
        moves: true,
        ..Link::default()
    });
    w
}

fn background(mut w: Write) -> Write {
    w.background = true;
    w
}

fn with_text(mut w: Write, text: &str) -> Write {
    w.text = Some(text.into());
    w
}

#[test]
fn writes_it_finds() {
    use How::*;
    let cases: Vec<(&str, Vec<Write>)> = vec![
        (
            "echo hi > out.txt",
            vec![with_text(w("out.txt", Whole), "hi\n")],
        ),
        (
            "echo -n 'a  b' >| out.txt",
            vec![with_text(w("out.txt", Whole), "a  b")],
        ),
        ("printf x >> log.txt", vec![w("log.txt", Append)]),
        ("make 2> err.log", vec![w("err.log", Whole)]),
        (
            "make &> all.log; make &>> all.log",
            vec![w("all.log", Whole), w("all.log", Append)],
        ),
        ("cmd >& out.log 2>&1", vec![w("out.log", Whole)]),
        (
            "cat > config.py <<'EOF'\nx = $1\nEOF\n",
            vec![with_text(w("config.py", Whole), "x = $1\n")],
        ),
        (
            "cat <<EOF > c.txt\nplain\nEOF",
            vec![with_text(w("c.txt", Whole), "plain\n")],
        ),
        ("cat <<EOF > c.txt\n$HOME\nEOF", vec![w("c.txt", Whole)]),
        (
            "cat <<-EOF > c.txt\n\tindented\nEOF",
            vec![with_text(w("c.txt", Whole), "indented\n")],
        ),
        (
            "tee out.txt <<'EOF'\nhello\nEOF",
            vec![with_text(w("out.txt", Whole), "hello\n")],
        ),
        (
            "echo x | tee -a log.txt other.txt",
            vec![w("log.txt", Append), w("other.txt", Append)],
        ),
        ("cargo test 2>&1 | tee test.log", vec![w("test.log", Whole)]),
        ("echo x | tee -i -p out.txt", vec![w("out.txt", Whole)]),
        ("echo x | tee -ia log.txt", vec![w("log.txt", Append)]),
        (
            "echo x | tee --output-error=warn out.txt",
            vec![w("out.txt", Whole)],
        ),
        (
            "sed -i 's/a/b/' f.txt g.txt",
            vec![w("f.txt", Edit), w("g.txt", Edit)],
        ),
        (
            "sed -i.bak -e 's/a/b/' -e 's/c/d/' f.txt",
            vec![w("f.txt", Edit)],
        ),
        ("sed -ni '/x/p' f.txt", vec![w("f.txt", Edit)]),
        ("sed --in-place=.orig s/a/b/ f.txt", vec![w("f.txt", Edit)]),
        ("sed 's/a/b/' f.txt > g.txt", vec![w("g.txt", Whole)]),
        ("perl -pi -e 's/a/b/' f.txt", vec![w("f.txt", Edit)]),
        ("perl -i.bak -pe 's/a/b/' f.txt", vec![w("f.txt", Edit)]),
        ("perl -ne 'print' f.txt", vec![]),
        // -0 and -l take digits only: switches after them still count.
        ("perl -0pi -e 's/a/b/' f.txt", vec![w("f.txt", Edit)]),
        ("perl -0777pi -e 's/a/b/' f.txt", vec![w("f.txt", Edit)]),
        ("perl -0x1FFpi -e 's/a/b/' f.txt", vec![w("f.txt", Edit)]),
        ("perl -pli -e 's/a/b/' f.txt", vec![w("f.txt", Edit)]),
        ("perl -l0pe 's/a/b/' f.txt", vec![]),
        ("perl -0 -ne 'print' f.txt", vec![]),
        ("cp a.txt b.txt", vec![into("b.txt", "a.txt")]),
        ("cp -T a.txt b.txt", vec![from(w("b.txt", Whole), "a.txt")]),
        (
            "cd sub && cp ../example.json config.json",
            vec![Write {
                into: Some("example.json".into()),
                ..from(w("sub/config.json", Whole), "sub/../example.json")
            }],
        ),
        ("cp -r src dest", vec![into("dest", "src")]),
        (
            "cp a.txt b.txt dir/",
            vec![into("dir/", "a.txt"), into("dir/", "b.txt")],
        ),
        ("cp -t dir a.txt", vec![into("dir", "a.txt")]),
        ("cp -n a.txt b.txt", vec![]),
        ("cp -b a.txt b.txt", vec![]),
        (
            "mv -f new.txt old.txt",
            vec![moved(into("old.txt", "new.txt"))],
        ),
        (
            "mv -n -f new.txt old.txt",
            vec![moved(into("old.txt", "new.txt"))],
        ),
        ("mv -f -n new.txt old.txt", vec![]),
        ("cp --backup=none a.txt b.txt", vec![into("b.txt", "a.txt")]),
        ("cp --backup=numbered a.txt b.txt", vec![]),
        (
            "cp --remove-destination a.txt b.txt",
            vec![link(into("b.txt", "a.txt"), false, false)],
        ),
        (
            "ln -sfn target link",
            vec![Write {
                link: Some(Link {
                    makes: true,
                    even_to_dir: true,
                    symbolic: true,
                    ..Link::default()
                }),
                ..into("link", "target")
            }],
        ),
        (
            "install -m 644 a.txt /opt/b.txt",
            vec![into("/opt/b.txt", "a.txt")],
        ),
        ("install -d build", vec![]),
        (
            "ln -sf target link",
            vec![Write {
                link: Some(Link {
                    makes: true,
                    even_to_dir: false,
                    symbolic: true,
                    ..Link::default()
                }),
                ..into("link", "target")
            }],
        ),
        (
            "touch a.txt -d yesterday b.txt; touch -r ref c",
            vec![w("a.txt", Append), w("b.txt", Append), w("c", Append)],
        ),
        (
            "npm run dev > dev.log 2>&1 & sleep 1; cat dev.log > copy.txt",
            vec![background(w("dev.log", Whole)), w("copy.txt", Whole)],
        ),
        (
            "(cd web && npm start > ../web.log) & wait",
            vec![background(w("web/../web.log", Whole))],
        ),
        (
            "ln -s target link",
            vec![Write {
                link: Some(Link {
                    makes: true,
                    symbolic: true,
                    keeps: true,
                    ..Link::default()
                }),
                ..into("link", "target")
            }],
        ),
        (
            "cp -l a.txt b.txt",
            vec![link(into("b.txt", "a.txt"), true, false)],
        ),
        ("truncate -s 0 big.log", vec![w("big.log", Whole)]),
        ("truncate -s +1M big.log", vec![]),
        (
            "dd if=/dev/zero of=disk.img bs=1M count=1",
            vec![w("disk.img", Whole)],
        ),
        (
            "dd if=x of=disk.img conv=notrunc",
            vec![w("disk.img", Edit)],
        ),
        (
            "python3 -c \"open('out.txt', 'w').write('x')\"",
            vec![w("out.txt", Whole)],
        ),
        (
            "python -c 'open(\"log.txt\", mode=\"a\").write(1)'",
            vec![w("log.txt", Append)],
        ),
        ("python3 -c \"print(open('in.txt').read())\"", vec![]),
        // In a comment or a string: no call.
        (
            "python3 - <<'EOF'\n# never open('notes.txt', 'w') here\nprint(len(open('notes.txt').read()))\nEOF",
            vec![],
        ),
        (
            "python3 -c \"print('open(\\\"n.txt\\\", \\\"w\\\")')\"",
            vec![],
        ),
        (
            "node -e \"// fs.writeFileSync('n.txt', 'x')\nconsole.log(1)\"",
            vec![],
        ),
        (
            "python3 - <<'EOF'\nfrom pathlib import Path\nPath('p.txt').write_text('x')\nEOF",
            vec![w("p.txt", Whole)],
        ),
        (
            "node -e \"require('fs').writeFileSync('o.json', '{}')\"",
            vec![w("o.json", Whole)],
        ),
        (
            "node -e \"fs.appendFileSync('o.log', 'x')\"",
            vec![w("o.log", Append)],
        ),
        (
            "cd sub && echo x > f.txt",
            vec![with_text(w("sub/f.txt", Whole), "x\n")],
        ),
        (
            "cd \"my dir\"&&sed -i s/a/b/ f.txt",
            vec![w("my dir/f.txt", Edit)],
        ),
        (
            "(cd sub; echo x > a); echo y > b",
            vec![
                with_text(w("sub/a", Whole), "x\n"),
                with_text(w("b", Whole), "y\n"),
            ],
        ),
        (
            "cd $D && echo x > rel; echo y > /abs/f",
            vec![with_text(w("/abs/f", Whole), "y\n")],
        ),
        (
            "for f in a b; do echo $f > out.txt; done",
            vec![w("out.txt", Whole)],
        ),
        ("if true; then cd x; fi; echo y > f", vec![]),
        ("{ echo a; echo b; } > both.txt", vec![w("both.txt", Whole)]),
        ("echo $(sed -i s/a/b/ f.txt)", vec![w("f.txt", Edit)]),
        (
            "bash -c 'echo x > inner.txt'",
            vec![with_text(w("inner.txt", Whole), "x\n")],
        ),
        (
            "bash -c -- 'echo x > inner.txt'",
            vec![with_text(w("inner.txt", Whole), "x\n")],
        ),
        (
            "sudo -u root tee /etc/x.conf < x",
            vec![w("/etc/x.conf", Whole)],
        ),
        ("env A=1 sed -i s/a/b/ f", vec![w("f", Edit)]),
        ("timeout 5 cp a b", vec![into("b", "a")]),
        ("echo x > $OUT", vec![]),
        ("echo x > *.txt", vec![]),
        ("echo x > ~/f", vec![]),
        ("echo x > /dev/null", vec![]),
        (
            "make 2>/dev/stderr >/dev/fd/1 | tee /dev/tty /proc/self/fd/2",
            vec![],
        ),
        ("cd /tmp && echo x > ../dev/stdout", vec![]),
        ("echo x > /dev/tcp/localhost/80", vec![]),
        (
            "echo x > /proc/1/fd/1",
            vec![with_text(w("/proc/1/fd/1", Whole), "x\n")],
        ),
        (
            "echo x > /dev/stdout.txt",
            vec![with_text(w("/dev/stdout.txt", Whole), "x\n")],
        ),
        (
            "cat > f <<'EOF'\napply_patch <<'X'\n*** Begin Patch\nX\nEOF",
            vec![with_text(
                w("f", Whole),
                "apply_patch <<'X'\n*** Begin Patch\nX\n",
            )],
        ),
        ("sort -o out.txt in.txt", vec![w("out.txt", Whole)]),
        ("sort -u --output=a.txt a.txt", vec![w("a.txt", Whole)]),
        ("sort -oa.txt a.txt", vec![w("a.txt", Whole)]),
        ("sort a.txt", vec![]),
        (
            "curl -sL -o page.html https://x",
            vec![w("page.html", Whole)],
        ),
        ("curl --output=f.bin https://x", vec![w("f.bin", Whole)]),
        ("curl -O https://x/f.bin", vec![]),
        ("wget -q -O f.tar.gz https://x", vec![w("f.tar.gz", Whole)]),
        ("wget -O - https://x", vec![]),
        ("wget -qO f.sh https://x", vec![w("f.sh", Whole)]),
        ("curl -fsSLo f.sh https://x", vec![w("f.sh", Whole)]),
        (
            "curl -sS https://x > page.html",
            vec![w("page.html", Whole)],
        ),
        (
            "wget -a wget.log --output-document=f https://x",
            vec![w("wget.log", Append), w("f", Whole)],
        ),
        ("ruby -pi -e 'gsub(/a/, \"b\")' f.rb", vec![w("f.rb", Edit)]),
        ("ruby -i.bak -pe 'x' f.rb", vec![w("f.rb", Edit)]),
        ("ruby script.rb f.rb", vec![]),
        (
            "bash <<'EOF'\necho x > inner.txt\nsed -i s/a/b/ f\nEOF",
            vec![with_text(w("inner.txt", Whole), "x\n"), w("f", Edit)],
        ),
        (
            "sh -s <<EOF\necho $HOME > out.txt\nEOF",
            vec![w("out.txt", Whole)],
        ),
        (
            "bash <<< 'echo x > here.txt'",
            vec![with_text(w("here.txt", Whole), "x\n")],
        ),
        ("bash script.sh <<'EOF'\necho x > no.txt\nEOF", vec![]),
        (
            "eval 'echo x > e.txt'",
            vec![with_text(w("e.txt", Whole), "x\n")],
        ),
        ("eval \"$CMD\" > /dev/null", vec![]),
        (
            "sudo bash -c 'echo x > /etc/f'",
            vec![with_text(w("/etc/f", Whole), "x\n")],
        ),
        (
            "flock /tmp/l -c 'echo x > f.txt'",
            vec![with_text(w("f.txt", Whole), "x\n")],
        ),
        ("flock -w 5 /tmp/l sed -i s/a/b/ f", vec![w("f", Edit)]),
        ("stdbuf -oL sed -i s/a/b/ f", vec![w("f", Edit)]),
        ("stdbuf -o L tee out.txt < in", vec![w("out.txt", Whole)]),
        ("ionice -c 3 cp a b", vec![into("b", "a")]),
        ("taskset -c 0,1 cp a b", vec![into("b", "a")]),
        ("taskset 0x3 cp a b", vec![into("b", "a")]),
        ("chrt -f 10 cp a b", vec![into("b", "a")]),
        ("setsid -f cp a b", vec![into("b", "a")]),
        ("cargo build --release && cargo test", vec![]),
        ("git commit -am 'x > y'", vec![]),
        ("echo 'unterminated", vec![]),
    ];
    for (cmd, want) in cases {
        // (What a sed replaces: sed_replacements_it_reads.)
        let got: Vec<Write> = writes(cmd)
            .into_iter()
            .map(|w| Write { edit: None, ..w })
            .collect();
        assert_eq!(got, want, "{cmd}");
    }
}

/// `sed -i` that plainly replaces literal text is read as that
/// replacement; anything sed could read as more (a pattern, `&`, an
/// escape, another command, an option that changes what it does) is not.
#[test]
fn sed_replacements_it_reads() {
    let r = |old: &str, new: &str, all| {
        Some(Replace {
            old: old.into(),
            new: new.into(),
            all,
        })
    };
    let cases = [
        (
            "sed -i 's/line 10/line ten/' a.txt",
            r("line 10", "line ten", false),
        ),
        ("sed -i -e 's|a-b|c/d|g' a.txt", r("a-b", "c/d", true)),
        (
            "sed --in-place --expression='s/x/y/' a.txt",
            r("x", "y", false),
        ),
        (
            "sed -E -i 's/foo_bar/baz/' a.txt b.txt",
            r("foo_bar", "baz", false),
        ),
        ("sed -i 's/old//' a.txt", r("old", "", false)),
        ("sed -i 's/a.b/c/' a.txt", None),
        ("sed -i 's/^a/b/' a.txt", None),
        ("sed -i 's/a/&&/' a.txt", None),
        ("sed -i 's/a\\/b/c/' a.txt", None),
        ("sed -i 's/a/b/2' a.txt", None),
        ("sed -i 's/a/b/I' a.txt", None),
        ("sed -i '3s/a/b/' a.txt", None),
        ("sed -i 's/a/b/;s/c/d/' a.txt", None),
        ("sed -i -e 's/a/b/' -e 's/c/d/' a.txt", None),
        ("sed -i.bak 's/a/b/' a.txt", None),
        ("sed -n -i 's/a/b/p' a.txt", None),
        ("sed -i \"s/$OLD/new/\" a.txt", None),
        ("sed -i 's//b/' a.txt", None),
    ];
    for (cmd, want) in cases {
        let edits: Vec<Option<Replace>> = writes(cmd)
            .into_iter()
            .map(|w| match w.edit {
                Some(Edits::Replace(mut list)) if list.len() == 1 => list.pop(),
                _ => None,
            })
            .collect();
        assert!(!edits.is_empty(), "{cmd}");
        for got in edits {
            assert_eq!(got, want, "{cmd}");
        }
    }
}

/// `sed -i` whose script is only substitutions (of patterns: a literal
/// one is a [`Replace`]) is read as that script with its options, to be
/// run by sed over another text; a script with anything else (a command
/// other than `s`, a flag that prints, writes or runs, a backup suffix,
/// `-n`, a script fsview cannot read) is not.
#[test]
fn sed_scripts_it_reads() {
    let sed = |args: &[&str]| {
        let mut all = vec!["--sandbox".to_string()];
        all.extend(args.iter().map(|s| s.to_string()));
        Some(Filter {
            program: "sed",
            args: all,
        })
    };
    let cases = [
        ("sed -i 's/a.b/c/' a.txt", sed(&["-e", "s/a.b/c/"])),
        (
            "sed -i -E 's/^(v)[0-9]+$/\\1 2/g' a.txt",
            sed(&["-E", "-e", "s/^(v)[0-9]+$/\\1 2/g"]),
        ),
        ("sed -Ei 's/a+/&&/' a.txt", sed(&["-E", "-e", "s/a+/&&/"])),
        (
            "sed --in-place -z --posix 's/a+/&&/' a.txt",
            sed(&["-z", "--posix", "-e", "s/a+/&&/"]),
        ),
        ("sed -i '3s/a/b/' a.txt", sed(&["-e", "3s/a/b/"])),
        (
            "sed -i '/^x/,$s/a/b/2' a.txt",
            sed(&["-e", "/^x/,$s/a/b/2"]),
        ),
        (
            "sed -i '\\|^x|I !s/a/b/I' a.txt",
            sed(&["-e", "\\|^x|I !s/a/b/I"]),
        ),
        (
            "sed -i 's/a/b/;s/c/d/' a.txt",
            sed(&["-e", "s/a/b/;s/c/d/"]),
        ),
        (
            "sed -i -e 's/a/b/' -e 's/c/d/' a.txt",
            sed(&["-e", "s/a/b/", "-e", "s/c/d/"]),
        ),
        ("sed -i 's/a\\/b/c/' a.txt", sed(&["-e", "s/a\\/b/c/"])),
        ("sed -i 's/a/b/w out' a.txt", None),
        ("sed -i 's/a/b/e' a.txt", None),
        ("sed -i 's/a/b/p' a.txt", None),
        ("sed -i '1d' a.txt", None),
        ("sed -i 's/a/b/;d' a.txt", None),
        ("sed -i ':a;s/a/b/;ta' a.txt", None),
        ("sed -i '/x/{s/a/b/}' a.txt", None),
        ("sed -i 's/a/b' a.txt", None),
        ("sed -i.bak 's/a.b/c/' a.txt", None),
        ("sed -iE 's/a.b/c/' a.txt", None),
        ("sed -n -i 's/a.b/c/' a.txt", None),
        ("sed -i -f script.sed a.txt", None),
        ("sed -i \"s/$OLD.*/new/\" a.txt", None),
    ];
    for (cmd, want) in cases {
        assert_eq!(filter_of(cmd), want, "{cmd}");
    }
}

/// The script run over another text for the one in-place edit of a.txt.
fn filter_of(cmd: &str) -> Option<Filter> {
    let edits: Vec<Option<Filter>> = writes(cmd)
        .into_iter()
        .filter(|w| w.path == Path::new("a.txt"))
        .map(|w| match w.edit {
            Some(Edits::Filter(f)) => Some(f),
            _ => None,
        })
        .collect();
    assert_eq!(edits.len(), 1, "{cmd}");
    edits.into_iter().next().flatten()
}

/// `perl -pi -e` whose script is only substitutions that run no code (no
/// `e` flag, nothing interpolated but a group, no `(?{`) is read as that
/// script with its options; anything else is not.
#[test]
fn perl_scripts_it_reads() {
    let perl = |args: &[&str]| {
        Some(Filter {
            program: "perl",
            args: args.iter().map(|s| s.to_string()).collect(),
        })
    };
    let cases = [
        (
            "perl -pi -e 's/\\bfoo\\b/bar/g' a.txt",
            perl(&["-p", "-e", "s/\\bfoo\\b/bar/g"]),
        ),
        (
            "perl -i -pe 's/^(\\w+) = .*$/$1 = 2/' a.txt",
            perl(&["-p", "-e", "s/^(\\w+) = .*$/$1 = 2/"]),
        ),
        (
            "perl -0777 -pi -e 's|a\\n+b|a b|s' a.txt",
            perl(&["-p", "-0777", "-e", "s|a\\n+b|a b|s"]),
        ),
        (
            "perl -pli -e 's/a/b/' -e 's#c#$&$&#' a.txt",
            perl(&["-p", "-l", "-e", "s/a/b/", "-e", "s#c#$&$&#"]),
        ),
        (
            "perl -w -pi -e 's/(x|y$)/z/i; s/q/r/' a.txt",
            perl(&["-p", "-e", "s/(x|y$)/z/i; s/q/r/"]),
        ),
        ("perl -pi -e 's/a/b/e' a.txt", None),
        ("perl -pi -e 's/a/system(\"x\")/e' a.txt", None),
        ("perl -pi -e 's/a/$x/' a.txt", None),
        ("perl -pi -e 's/a/@{[ `id` ]}/' a.txt", None),
        ("perl -pi -e 's/a/${\\ `id`}/' a.txt", None),
        ("perl -pi -e 's/$x/b/' a.txt", None),
        ("perl -pi -e 's/(?{ `id` })a/b/' a.txt", None),
        ("perl -pi -e 's/a(??{ `id` })/b/' a.txt", None),
        // Perl 5.38's optimistic code blocks, and any backtracking verb.
        ("perl -pi -e 's/a(*{ `id` })/b/' a.txt", None),
        ("perl -pi -e 's/a(**{ `id` })/b/' a.txt", None),
        ("perl -pi -e 's/a(*FAIL)|b/c/' a.txt", None),
        ("perl -pi -e 's/a( ?{ `id` })/b/x' a.txt", None),
        ("perl -pi -e 's{a}{b}' a.txt", None),
        ("perl -pi -e 'print; s/a/b/' a.txt", None),
        ("perl -pi -e 's/a/b/; unlink \"x\"' a.txt", None),
        ("perl -pi.bak -e 's/a/b/' a.txt", None),
        ("perl -pie 's/a/b/' a.txt", None),
        ("perl -ni -e 's/a/b/; print' a.txt", None),
        ("perl -pi -Mstrict -e 's/a/b/' a.txt", None),
        ("perl -pi script.pl a.txt", None),
    ];
    for (cmd, want) in cases {
        assert_eq!(filter_of(cmd), want, "{cmd}");
    }
}

/// Whether `sed --sandbox` runs here (GNU sed 4.3 or later).
fn gnu_sed() -> bool {
    std::process::Command::new("sed")
        .args(["--sandbox", "-e", "s/a/b/"])
        .stdin(std::process::Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success())
}

/// What a script makes of a text is what its program makes of it (sed in
/// its sandbox): a script that fails, or a program missing, makes nothing.
#[test]
fn a_script_is_run_by_its_program() {
    let text = "version = 1\nname = \"x\"\nversion = 10";
    let run = |cmd: &str| filter_of(cmd).and_then(|f| f.run(text));
    if gnu_sed() {
        assert_eq!(
            run(r"sed -i -E 's/^(version) = [0-9]+$/\1 = 2/' a.txt").as_deref(),
            Some("version = 2\nname = \"x\"\nversion = 2")
        );
        assert_eq!(
            run("sed -i -e '2s/x/&&/' -e 's/1$/one/' a.txt").as_deref(),
            Some("version = one\nname = \"xx\"\nversion = 10")
        );
        // Unmatched: sed fails, so nothing is made.
        assert_eq!(run("sed -i -E 's/(/x/' a.txt"), None);
    } else {
        eprintln!("skipped: the sed runs need GNU sed 4.3 or later on PATH");
    }
    if std::process::Command::new("perl")
        .arg("-v")
        .output()
        .is_ok()
    {
        assert_eq!(
            run(r"perl -pi -e 's/^(version) = \d+$/$1 = 2/' a.txt").as_deref(),
            Some("version = 2\nname = \"x\"\nversion = 2")
        );
        assert_eq!(
            run(r"perl -0777 -pi -e 's/1\nname/one\nNAME/' a.txt").as_deref(),
            Some("version = one\nNAME = \"x\"\nversion = 10")
        );
        assert_eq!(run("perl -pi -e 's/(/x/' a.txt"), None);
    } else {
        eprintln!("skipped: the perl runs need perl on PATH");
    }
    let missing = Filter {
        program: "fsview-no-such-program",
        args: Vec::new(),
    };
    assert_eq!(missing.run(text), None);
}

#[test]
fn a_wrapper_that_changes_directory_takes_what_it_runs_there() {
    use How::*;
    let cases: Vec<(&str, Vec<Write>)> = vec![
        // The command's files there, its redirection here.
        (
            "env -C sub sed -i 1d notes.txt > log.txt",
            vec![w("log.txt", Whole), w("sub/notes.txt", Edit)],
        ),
        ("env -Csub tee a.txt", vec![w("sub/a.txt", Whole)]),
        ("env --chdir sub tee a.txt", vec![w("sub/a.txt", Whole)]),
        (
            "cd src && env -C .. tee a.txt",
            vec![w("src/../a.txt", Whole)],
        ),
        ("sudo -D /etc tee x.conf", vec![w("/etc/x.conf", Whole)]),
        (
            "env -C sub bash -c 'echo hi > a.txt'",
            vec![with_text(w("sub/a.txt", Whole), "hi\n")],
        ),
        (
            "env -C sub cp notes.txt ../b.txt",
            vec![Write {
                into: Some("notes.txt".into()),
                ..from(w("sub/../b.txt", Whole), "sub/notes.txt")
            }],
        ),
        // A directory fsview cannot read: nothing relative is guessed.
        (
            "env -C \"$D\" tee a.txt /abs/b.txt",
            vec![w("/abs/b.txt", Whole)],
        ),
        // Options as getopt reads them: grouped, attached, abbreviated.
        ("env -iC sub tee f", vec![w("sub/f", Whole)]),
        ("env -vC sub tee f", vec![w("sub/f", Whole)]),
        ("sudo -nD sub tee f", vec![w("sub/f", Whole)]),
        ("env --ch sub tee f", vec![w("sub/f", Whole)]),
        ("env -C=sub tee f", vec![w("=sub/f", Whole)]),
        ("env -C a env -C b tee f", vec![w("a/b/f", Whole)]),
        // Options before the subcommand.
        ("uv --directory sub run tee f", vec![w("sub/f", Whole)]),
        // env -S: the string is the command line.
        ("env -S \"tee sub/f\"", vec![w("sub/f", Whole)]),
        (
            "env --split-string='tee sub/f' g",
            vec![w("sub/f", Whole), w("g", Whole)],
        ),
        ("env -C sub -S \"tee f\"", vec![w("sub/f", Whole)]),
        ("env -iS 'tee f'", vec![w("f", Whole)]),
    ];
    for (cmd, want) in cases {
        assert_eq!(writes(cmd), want, "{cmd}");
    }
}

#[test]
fn git_discards_it_finds() {
    let idx = Loses::SinceIndex;
    let at = |rev: &str, untracked, ignored| Loses::SinceCommit {
        rev: rev.into(),
        untracked,
        ignored,
    };
    let head = at("HEAD", false, false);
    let clean = |dirs, ignored, only_ignored| Loses::Untracked {
        dirs,
        ignored,
        only_ignored,
    };
    let d = |dir: &str, paths: &[&str], loses: Loses| {
        (
            PathBuf::from(dir),
            paths.iter().map(|p| p.to_string()).collect::<Vec<_>>(),
            loses,
        )
    };
    type Found = (PathBuf, Vec<String>, Loses);
    let cases: Vec<(&str, Vec<Found>)> = vec![
        (
            "git checkout -- f.rs g.rs",
            vec![d("", &["f.rs", "g.rs"], idx.clone())],
        ),
        (
            "git checkout HEAD -- f.rs",
            vec![d("", &["f.rs"], head.clone())],
        ),
        (
            "git checkout HEAD~2 -- .",
            vec![d("", &["."], at("HEAD~2", false, false))],
        ),
        (
            "git checkout f.rs",
            vec![d("", &["f.rs"], Loses::CheckoutAmbiguous)],
        ),
        (
            "git checkout main src/",
            vec![d("", &["main", "src/"], Loses::CheckoutAmbiguous)],
        ),
        (
            "git checkout .",
            vec![d("", &["."], Loses::CheckoutAmbiguous)],
        ),
        ("git checkout -f", vec![d("", &[], head.clone())]),
        // In the directory a wrapper runs it in; none, when that is not
        // a literal word.
        (
            "env -C sub git checkout -- f.rs",
            vec![d("sub", &["f.rs"], idx.clone())],
        ),
        (
            "sudo --chdir=/srv git -C app restore f.rs",
            vec![d("/srv/app", &["f.rs"], idx.clone())],
        ),
        ("env -C \"$D\" git checkout -- f.rs", vec![]),
        (
            "env -iC sub git checkout -- f.rs",
            vec![d("sub", &["f.rs"], idx.clone())],
        ),
        ("git checkout --force main", vec![d("", &[], head.clone())]),
        ("git restore f.rs", vec![d("", &["f.rs"], idx.clone())]),
        ("git restore -- .", vec![d("", &["."], idx.clone())]),
        (
            "git restore --source=HEAD --worktree f.rs",
            vec![d("", &["f.rs"], head.clone())],
        ),
        (
            "git restore -s v1 -W f.rs",
            vec![d("", &["f.rs"], at("v1", false, false))],
        ),
        ("git restore -SW f.rs", vec![d("", &["f.rs"], head.clone())]),
        ("git reset --hard", vec![d("", &[], head.clone())]),
        (
            "git reset --hard origin/main",
            vec![d("", &[], head.clone())],
        ),
        ("git stash", vec![d("", &[], head.clone())]),
        // A `git add` before it: what was untracked is lost too.
        (
            "git add -A && git reset --hard -q",
            vec![d("", &[], at("HEAD", true, false))],
        ),
        (
            "git add . && git stash",
            vec![d("", &[], at("HEAD", true, false))],
        ),
        // A new branch forced onto a start point; unforced, git refuses.
        (
            "git checkout -B main HEAD --force",
            vec![d("", &[], head.clone())],
        ),
        (
            "git checkout -f -b topic v2",
            vec![d("", &[], at("v2", false, false))],
        ),
        ("git checkout -b topic", vec![]),
        // git rm -f: the files and their changes; unforced, git refuses.
        (
            "git rm -qf notes.txt",
            vec![d("", &["notes.txt"], head.clone())],
        ),
        ("git rm notes.txt", vec![]),
        ("git rm -f --cached notes.txt", vec![]),
        ("git stash -u", vec![d("", &[], at("HEAD", true, false))]),
        (
            "git stash push --all",
            vec![d("", &[], at("HEAD", true, true))],
        ),
        (
            "git stash push -m wip -- f.rs",
            vec![d("", &["f.rs"], head.clone())],
        ),
        ("git stash save wip", vec![d("", &[], head.clone())]),
        ("git clean -f", vec![d("", &[], clean(false, false, false))]),
        ("git clean -fd", vec![d("", &[], clean(true, false, false))]),
        (
            "git clean -fdx build",
            vec![d("", &["build"], clean(true, true, false))],
        ),
        (
            "git clean -f -X",
            vec![d("", &[], clean(false, false, true))],
        ),
        (
            "git switch --discard-changes main",
            vec![d("", &[], head.clone())],
        ),
        ("git switch -f main", vec![d("", &[], head.clone())]),
        (
            "cd sub && git checkout -- f.rs",
            vec![d("sub", &["f.rs"], idx.clone())],
        ),
        ("git -C sub restore .", vec![d("sub", &["."], idx.clone())]),
        ("git -c x.y=1 reset --hard", vec![d("", &[], head.clone())]),
        // Nothing lost, or nothing fsview can know.
        ("git checkout", vec![]),
        ("git checkout -b new", vec![]),
        ("git checkout -p f.rs", vec![]),
        ("git switch main", vec![]),
        ("git reset HEAD~1", vec![]),
        ("git reset --keep HEAD~1", vec![]),
        ("git restore --staged f.rs", vec![]),
        ("git stash pop", vec![]),
        ("git stash list", vec![]),
        ("git stash -p", vec![]),
        ("git clean -n", vec![]),
        ("git clean -fn", vec![]),
        ("git clean -d", vec![]),
        ("git checkout -- $F", vec![]),
        ("git --work-tree=/w checkout -- f.rs", vec![]),
        ("git status && git diff > x.patch", vec![]),
        ("echo git checkout .", vec![]),
    ];
    for (cmd, want) in cases {
        let got: Vec<_> = discards(cmd)
            .into_iter()
            .map(|d| (d.dir, d.paths, d.loses))
            .collect();
        assert_eq!(got, want, "{cmd}");
    }
    assert_eq!(
        discards("git checkout  --  .")[0].words,
        "git checkout -- ."
    );
}

#[test]
fn finds_patches_as_codex_takes_them() {
    let patch = "*** Begin Patch\n*** Add File: b.txt\n+bee\n*** End Patch\n";
    assert_eq!(
        apply_patch(&format!("apply_patch <<'EOF'\n{patch}EOF\n")),
        Some((None, patch.to_string()))
    );
    for (cmd, dir) in [
        ("cd sub && apply_patch <<\"PATCH\"\nx\nPATCH", "sub"),
        ("cd sub&&apply_patch <<'EOF'\nx\nEOF", "sub"),
        ("cd 'my dir' && applypatch <<EOF\nx\nEOF", "my dir"),
        ("cd \"my dir\" && apply_patch <<'EOF'\nx\nEOF\n", "my dir"),
    ] {
        assert_eq!(
            apply_patch(cmd),
            Some((Some(dir.into()), "x\n".to_string())),
            "{cmd}"
        );
    }
    for cmd in [
        "cat <<EOF\nx\nEOF",
        "apply_patch <<EOF\nno end",
        // Quoted inside another command's here-document: its input.
        "cat > notes.md <<'EOF'\napply_patch <<'X'\n*** Begin Patch\n*** End Patch\nX\nEOF",
        "ls; apply_patch <<'EOF'\nx\nEOF",
        "cd $D && apply_patch <<'EOF'\nx\nEOF",
        "apply_patch <<'EOF' &\nx\nEOF",
    ] {
        assert_eq!(apply_patch(cmd), None, "{cmd}");
    }
}

#[test]
fn numbered_lines() {
    assert_eq!(unnumber("     3\tline 3"), Some((3, "line 3")));
    assert_eq!(unnumber("    12\t"), Some((12, "")));
    assert_eq!(unnumber("line"), None);
    assert_eq!(
        unnumbered("     3\tline 3\n     4\t\n", 3).as_deref(),
        Some("line 3\n")
    );
    assert_eq!(unnumbered("     3\ta\n     5\tb\n", 3), None);
    assert_eq!(unnumbered("a\n", 1), None);
    // The output trimmed at its end: the last line's tab gone.
    assert_eq!(unnumbered("     1\tx\n     2", 1).as_deref(), Some("x\n"));
}

#[test]
fn what_the_output_showed() {
    let s = |cmd: &str, out: Output<'_>| shown(read(cmd).unwrap(), out);
    let printed = |text: &str, form| {
        ShownText::Printed(Printed {
            text: text.into(),
            form,
        })
    };
    use crate::event::Form;
    assert_eq!(
        s("cat a", Output::Exact("")).map(|x| (x.text, x.extent)),
        Some((printed("", Form::Exact), Extent::Whole))
    );
    assert_eq!(s("head -n 2 a", Output::Exact("")), None);
    assert_eq!(
        s(
            "cat a",
            Output::Head {
                text: "one\ntwo\nthr",
                trimmed: true
            }
        )
        .map(|x| (x.text, x.extent)),
        Some((printed("one\ntwo\n", Form::Trimmed), Extent::Start))
    );
    assert_eq!(
        s(
            "tail -n 3 a",
            Output::Head {
                text: "x\ny",
                trimmed: false
            }
        ),
        None
    );
    assert_eq!(
        s(
            "nl -ba a | sed -n '2,3p'",
            Output::Terminal("     2\tb\r\n     3\tc\r\n")
        )
        .map(|x| (x.text, x.offset)),
        Some((printed("b\nc", Form::Terminal), 2))
    );
    // In a list: the known parts taken away, exactly; else nothing.
    let text = |cmd: &str, out| s(cmd, out).map(|x| x.text);
    assert_eq!(
        text(
            "echo top && cat a; echo done",
            Output::Exact("top\nx\ny\ndone\n")
        ),
        Some(printed("x\ny\n", Form::Exact))
    );
    assert_eq!(
        text(
            "echo top && cat a; echo done",
            Output::Exact("top\nwarn\nx\ndone\n")
        )
        .map(|t| t == printed("warn\nx\n", Form::Exact)),
        Some(true)
    );
    assert_eq!(text("echo top && cat a", Output::Exact("tip\nx\n")), None);
    assert_eq!(
        text("cat a; echo done", Output::Trimmed("x\n  y\n\ndone")),
        Some(printed("x\n  y", Form::Trimmed))
    );
    assert_eq!(
        text("cat a; echo done", Output::Terminal("x\r\ndone\r\n")),
        Some(printed("x\r\n", Form::Terminal))
    );
    assert_eq!(
        text(
            "cat a; echo done",
            Output::Head {
                text: "x\ny",
                trimmed: false
            }
        ),
        None
    );
}

#[test]
fn unparsable_lines_gate_the_writes_in_the_parts_that_parse() {
    type Found = (String, How, bool);
    let found = |cmd: &str| -> Vec<Found> {
        writes(cmd)
            .into_iter()
            .map(|w| (w.path.display().to_string(), w.how, w.background))
            .collect()
    };
    let w = |p: &str, how| (p.to_string(), how, false);
    use How::*;
    let cases: Vec<(&str, Vec<Found>)> = vec![
        // brush-parser rejects each of these lines whole.
        (
            "x=$(case $y in a) echo a;; esac); echo hi > notes.txt",
            vec![w("notes.txt", Whole)],
        ),
        (
            "select f in a b; do echo $f; break; done; sed -i s/a/b/ notes.txt",
            vec![w("notes.txt", Edit)],
        ),
        (
            "select f in a b\ndo\n  echo $f > out.txt\ndone\necho hi > notes.txt",
            vec![w("out.txt", Whole), w("notes.txt", Whole)],
        ),
        (
            "select f in a; do :; done; npm run dev > dev.log &",
            vec![("dev.log".into(), Whole, true)],
        ),
        (
            "bash -c 'select f in a; do :; done; echo x > b.txt'",
            vec![w("b.txt", Whole)],
        ),
        ("cd sub\necho x > f", vec![w("sub/f", Whole)]),
        // A `cd` in a line that does not parse: where it leads is not
        // known, so relative paths after it are not taken.
        (
            "select d in a; do cd $d; done; echo x > rel.txt; echo y > /abs.txt",
            vec![w("/abs.txt", Whole)],
        ),
        (
            "x=$(case $y in a) cd sub;; esac); echo x > f; echo y > /g",
            vec![w("/g", Whole)],
        ),
        // Nothing taken from what may be text: quotes, a comment, a
        // here-document, a line ending inside quotes.
        ("select f in a; do echo 'a; echo x > q.txt'; done", vec![]),
        ("select f in a; do :; done # ; echo x > c.txt", vec![]),
        (
            "select f in a; do cat > f.txt <<EOF\necho x > g.txt\nEOF\ndone",
            vec![],
        ),
        (
            "x=$(case $y in a) echo;; esac); echo \"\necho x > s.txt\n\"",
            vec![],
        ),
        ("echo $(case $y in a) echo a;; esac) > f", vec![]),
    ];
    for (cmd, want) in cases {
        assert_eq!(found(cmd), want, "{cmd}");
    }
    let d = discards("select f in a; do :; done; git checkout -- f.rs");
    assert_eq!(
        d.iter().map(|d| d.paths.clone()).collect::<Vec<_>>(),
        vec![vec!["f.rs".to_string()]]
    );
}

/// A hook answers in milliseconds: a long line that does not parse is read
/// two parses a line, up to its 400th line.
#[test]
fn a_long_line_that_does_not_parse_is_read_up_to_a_bound() {
    let bad: String = (0..500)
        .map(|i| format!("select f in a; do :; done; echo x > f{i}.txt\n"))
        .collect();
    let found = writes(&bad);
    assert_eq!(found.len(), 400);
    assert_eq!(found[399].path, PathBuf::from("f399.txt"));
}
