package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// cacheBenchJava is the Java side of the cache bench: it caches the tree
// with Curator's CuratorCache, reports the load time and the heap it added,
// then counts NODE_CHANGED events until it reads "stop".
const cacheBenchJava = `
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.retry.ExponentialBackoffRetry;

public final class CacheBench {
    private static long used() throws InterruptedException {
        Runtime rt = Runtime.getRuntime();
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(100);
        }
        return rt.totalMemory() - rt.freeMemory();
    }

    public static void main(String[] args) throws Exception {
        CuratorFramework client = CuratorFrameworkFactory.builder().connectString(args[0])
            .sessionTimeoutMs(15000).connectionTimeoutMs(15000)
            .retryPolicy(new ExponentialBackoffRetry(100, 10)).build();
        client.start();
        client.blockUntilConnected(30, TimeUnit.SECONDS);
        long before = used();
        CountDownLatch initialized = new CountDownLatch(1);
        AtomicLong changes = new AtomicLong();
        CuratorCache cache = CuratorCache.build(client, args[1]);
        cache.listenable().addListener(new CuratorCacheListener() {
            @Override
            public void event(Type type, ChildData oldData, ChildData data) {
                if (type == Type.NODE_CHANGED) {
                    changes.incrementAndGet();
                }
            }

            @Override
            public void initialized() {
                initialized.countDown();
            }
        });
        long t0 = System.nanoTime();
        cache.start();
        if (!initialized.await(5, TimeUnit.MINUTES)) {
            System.out.println("{\"fatal\":\"not initialized within 5 minutes\"}");
            System.exit(1);
        }
        long loadNs = System.nanoTime() - t0;
        long after = used();
        System.out.println("{\"load_ns\":" + loadNs + ",\"heap_bytes\":" + (after - before) + ",\"nodes\":" + cache.size() + "}");
        System.out.flush();
        changes.set(0);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        in.readLine();
        System.out.println("{\"events\":" + changes.get() + "}");
        System.out.flush();
        cache.close();
        client.close();
        System.exit(0);
    }
}
`

// benchJavaCache compiles and runs CacheBench against the tree at root.
func benchJavaCache(ctx context.Context, connect, root string, paths []string, dur time.Duration) (*cacheResult, error) {
	javac, err1 := exec.LookPath("javac")
	java, err2 := exec.LookPath("java")
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("%w: no java or javac on PATH", errPeerMissing)
	}
	var jars []string
	for _, pattern := range curatorJars {
		m, _ := filepath.Glob(filepath.Join(javaDir, pattern))
		if len(m) == 0 {
			return nil, fmt.Errorf("%w: no %s in %s", errPeerMissing, pattern, javaDir)
		}
		slices.Sort(m)
		jars = append(jars, m[len(m)-1])
	}
	dir, err := os.MkdirTemp("", "go-curator-bench-cache-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "CacheBench.java")
	if err := os.WriteFile(src, []byte(cacheBenchJava), 0o644); err != nil {
		return nil, err
	}
	cp := strings.Join(jars, ":")
	if out, err := exec.CommandContext(ctx, javac, "-encoding", "UTF-8", "-cp", cp, "-d", dir, src).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("javac CacheBench.java: %w\n%s", err, out)
	}
	cmd := exec.CommandContext(ctx, java, "-Xmx1g", "-Dorg.slf4j.simpleLogger.defaultLogLevel=error",
		"-cp", dir+":"+cp, "CacheBench", connect, root)
	stderr := &tailBuffer{max: 4096}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer cmd.Wait()
	defer stdin.Close()
	lines := bufio.NewScanner(stdout)
	var loaded struct {
		Fatal     string `json:"fatal"`
		LoadNs    int64  `json:"load_ns"`
		HeapBytes int64  `json:"heap_bytes"`
		Nodes     int    `json:"nodes"`
		Events    int64  `json:"events"`
	}
	next := func() error {
		if !lines.Scan() {
			return fmt.Errorf("CacheBench ended: %v\n%s", lines.Err(), stderr.tail())
		}
		if err := json.Unmarshal(lines.Bytes(), &loaded); err != nil {
			return fmt.Errorf("CacheBench said %q: %w", lines.Text(), err)
		}
		if loaded.Fatal != "" {
			return fmt.Errorf("CacheBench: %s", loaded.Fatal)
		}
		return nil
	}
	if err := next(); err != nil {
		return nil, err
	}
	res := &cacheResult{Load: time.Duration(loaded.LoadNs), Nodes: loaded.Nodes, Window: dur}
	res.HeapPerNode = float64(loaded.HeapBytes) / float64(max(loaded.Nodes, 1))
	wctx, cancel := context.WithTimeout(ctx, dur)
	res.Writes, err = writeLoad(wctx, connect, paths)
	cancel()
	if err != nil {
		return nil, err
	}
	time.Sleep(time.Second) // events of the window's last writes
	fmt.Fprintln(stdin, "stop")
	if err := next(); err != nil {
		return nil, err
	}
	res.Events = loaded.Events
	return res, nil
}
